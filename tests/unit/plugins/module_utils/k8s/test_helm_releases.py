# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""helm_releases decides per release over recorded helm answers, and runs only what must change.

A stand-in helm answers `list`, `get values`, `pull`, `upgrade`, `uninstall`
and `version` as helm 3.19 does (JSON shapes recorded from the testbed's helm)
and records every command. The real helm runs in tests/integration, where the
gitlab_runner role applies its pools through the module.
"""

import json
import os
import threading
import time

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.k8s.helm_releases import (
    Helm,
    apply_releases,
    chart_ref,
    decide,
    same_chart,
    wanted_chart,
)

VALUES = {"gitlabUrl": "https://gitlab.example.com", "concurrent": 4, "runners": {"name": "l40s"}}


def release(name="gitlab-runner-l40s", **overrides):
    base = {"name": name, "namespace": "gitlab-runner", "state": "present", "chart": "gitlab-runner",
            "chart_version": "0.86.0", "chart_repo_url": "http://charts.example", "chart_path": None,
            "values": VALUES, "wait": True, "atomic": True, "timeout": 300, "create_namespace": False}
    base.update(overrides)
    return base


def listed(name, chart="gitlab-runner-0.86.0", status="deployed", namespace="gitlab-runner"):
    return {"name": name, "namespace": namespace, "revision": "1", "status": status, "chart": chart,
            "app_version": "v18.6.1", "updated": "2026-11-25 05:00:00 +0000 UTC"}


class RecordedHelm:
    """helm's answers per release; every argv it was asked, in order (thread-safe)."""

    def __init__(self, deployed=(), values=None, fail=(), version="v3.19.5", crds_missing=False, broken=()):
        self.deployed = {(r["namespace"], r["name"]): r for r in deployed}
        self.values = values or {}
        self.fail = set(fail)
        self.broken = set(broken)  # (verb, its first argument) that helm fails, e.g. ("list", "--namespace")
        self.version = version
        self.crds_missing = crds_missing
        self.calls = []
        self._lock = threading.Lock()

    def __call__(self, argv):
        args = argv[1:]
        with self._lock:
            self.calls.append(args)
        verb = args[0]
        if (verb, args[1] if len(args) > 1 else "") in self.broken:
            return 1, "", f"Error: {verb} failed: Kubernetes cluster unreachable"
        if verb == "version":
            return 0, self.version, ""
        if verb == "list":
            if "--all" in args and self.version.startswith("v4"):
                return 1, "", "Error: unknown flag: --all"  # helm 4 lists every status by default
            namespace = args[args.index("--namespace") + 1]
            return 0, json.dumps([r for (ns, _n), r in self.deployed.items() if ns == namespace]), ""
        if verb == "get":
            return 0, json.dumps(self.values.get(args[2])), ""
        if verb == "pull":
            destination = args[args.index("--destination") + 1]
            open(os.path.join(destination, "gitlab-runner-0.86.0.tgz"), "w").close()
            return 0, "", ""
        name = args[2] if verb == "upgrade" else args[1]
        if verb == "template":
            return 0, "", ""
        if self.crds_missing and "--dry-run=server" in args:
            return 1, "", ('Error: unable to build kubernetes objects from release manifest: resource mapping not found '
                           'for name: "cluster-policy": no matches for kind "ClusterPolicy" in version "nvidia.com/v1"')
        if name in self.fail:
            return 1, "", f"Error: UPGRADE FAILED: release {name} failed, and has been rolled back due to atomic being set"
        return 0, "", ""

    def verbs(self, verb):
        return [args for args in self.calls if args[0] == verb]


def apply(helm, releases, check_mode=False):
    return apply_releases(Helm(helm, "helm", ["--kube-context", "ci"]), releases, check_mode, workers=4)


def test_unchanged_release_is_left_alone_without_pulling_its_chart():
    helm = RecordedHelm([listed("gitlab-runner-l40s")], {"gitlab-runner-l40s": VALUES})
    result = apply(helm, [release()])
    assert result["changed"] is False
    assert result["releases"][0]["action"] == "unchanged"
    assert not helm.verbs("pull") and not helm.verbs("upgrade")
    # The cluster reached is the one the task names.
    assert all(args[-2:] == ["--kube-context", "ci"] for args in helm.calls)


@pytest.mark.parametrize("record, values, why", [
    (listed("gitlab-runner-l40s"), {**VALUES, "concurrent": 2}, "values differ"),
    (listed("gitlab-runner-l40s", chart="gitlab-runner-0.85.0"), VALUES, "chart version differs"),
    (listed("gitlab-runner-l40s", status="failed"), VALUES, "last upgrade failed"),
])
def test_release_that_differs_is_upgraded(record, values, why):
    helm = RecordedHelm([record], {"gitlab-runner-l40s": values})
    result = apply(helm, [release()])
    assert result["releases"][0]["action"] == "upgrade", why
    assert result["changed"] is True
    (upgrade,) = helm.verbs("upgrade")
    assert upgrade[:3] == ["upgrade", "--install", "gitlab-runner-l40s"]
    assert "--wait" in upgrade and "--atomic" in upgrade and "--dry-run=server" not in upgrade
    assert upgrade[upgrade.index("--timeout") + 1] == "300s"


def test_each_chart_is_pulled_once_for_many_releases():
    releases = [release(f"gitlab-runner-p{n:02d}") for n in range(12)]
    helm = RecordedHelm()
    result = apply(helm, releases)
    assert [r["action"] for r in result["releases"]] == ["install"] * 12
    assert len(helm.verbs("pull")) == 1
    assert len(helm.verbs("upgrade")) == 12
    # One `helm list` per namespace, never one per release.
    assert len(helm.verbs("list")) == 1


def test_check_mode_renders_through_helm_dry_run_and_installs_nothing():
    helm = RecordedHelm([listed("gitlab-runner-old")])
    result = apply(helm, [release(), release("gitlab-runner-old", state="absent")], check_mode=True)
    assert [r["action"] for r in result["releases"]] == ["install", "uninstall"]
    assert result["changed"] is True
    (upgrade,) = helm.verbs("upgrade")
    assert "--dry-run=server" in upgrade and "--wait" not in upgrade
    assert not helm.verbs("uninstall")


def test_diff_shows_chart_and_values_before_and_after():
    helm = RecordedHelm([listed("gitlab-runner-l40s")], {"gitlab-runner-l40s": {**VALUES, "concurrent": 2}})
    (diff,) = apply(helm, [release()])["diff"]
    assert '"concurrent": 2' in diff["before"] and '"concurrent": 4' in diff["after"]
    assert "gitlab-runner-0.86.0" in diff["after"]
    assert diff["after_header"] == "helm release gitlab-runner/gitlab-runner-l40s (upgrade)"


def test_absent_release_uninstalls_only_what_exists():
    helm = RecordedHelm([listed("gitlab-runner-old")])
    result = apply(helm, [release("gitlab-runner-old", state="absent"), release("gitlab-runner-never", state="absent")])
    assert [r["action"] for r in result["releases"]] == ["uninstall", "absent"]
    assert [r["changed"] for r in result["releases"]] == [True, False]
    (uninstall,) = helm.verbs("uninstall")
    assert uninstall[1] == "gitlab-runner-old" and "--wait" in uninstall
    assert not helm.verbs("get")


def test_an_uninstall_cascades_and_waits_as_asked():
    """cascade is helm's --cascade (background, its default, is not spelled out); wait false leaves out --wait."""
    helm = RecordedHelm([listed("gitlab-runner-a"), listed("gitlab-runner-b")])
    apply(helm, [release("gitlab-runner-a", state="absent", cascade="foreground", wait=False),
                 release("gitlab-runner-b", state="absent", cascade="background")])
    uninstalls = {argv[1]: (argv[argv.index("--cascade") + 1] if "--cascade" in argv else None, "--wait" in argv)
                  for argv in helm.verbs("uninstall")}
    assert uninstalls == {"gitlab-runner-a": ("foreground", False), "gitlab-runner-b": (None, True)}


def test_one_failed_release_is_named_and_the_others_still_apply():
    helm = RecordedHelm(fail={"gitlab-runner-bad"})
    result = apply(helm, [release("gitlab-runner-good"), release("gitlab-runner-bad")])
    assert [(r["name"], r["changed"], r["failed"]) for r in result["releases"]] == [
        ("gitlab-runner-good", True, False), ("gitlab-runner-bad", False, True)]
    (error,) = result["errors"]
    assert error.startswith("gitlab-runner/gitlab-runner-bad: helm upgrade failed (rc 1)")
    assert "rolled back" in error


def test_a_later_wave_runs_after_the_earlier_one_has_finished():
    helm = RecordedHelm()
    result = apply(helm, [release("scale-set", wave=1), release("controller"), release("pool")])
    upgraded = [args[2] for args in helm.verbs("upgrade")]
    assert upgraded[-1] == "scale-set" and sorted(upgraded[:2]) == ["controller", "pool"]
    assert all(r["changed"] for r in result["releases"])


def test_after_a_failed_wave_the_later_waves_are_not_run_and_fail():
    helm = RecordedHelm(fail={"controller"})
    result = apply(helm, [release("scale-set", wave=1), release("controller")])
    assert [args[2] for args in helm.verbs("upgrade")] == ["controller"]
    assert [(r["name"], r["failed"]) for r in result["releases"]] == [("scale-set", True), ("controller", True)]
    assert "gitlab-runner/scale-set: not run, a release of an earlier wave failed" in result["errors"]


def test_helm_4_rolls_back_with_its_own_flag():
    helm = RecordedHelm(version="v4.0.1")
    apply(helm, [release()])
    (upgrade,) = helm.verbs("upgrade")
    assert "--rollback-on-failure" in upgrade and "--atomic" not in upgrade


@pytest.mark.parametrize("version, all_flag", [("v3.19.5", True), ("v4.3.1", False)])
def test_every_status_is_listed_as_each_helm_asks(version, all_flag):
    """helm 3 lists a pending release only with --all, which helm 4 (listing all by default) refuses."""
    helm = RecordedHelm([listed("gitlab-runner-l40s", status="pending-upgrade")], {"gitlab-runner-l40s": VALUES},
                        version=version)
    result = apply(helm, [release()])
    (listing,) = helm.verbs("list")
    assert ("--all" in listing) is all_flag
    assert not result["errors"] and [r["action"] for r in result["releases"]] == ["upgrade"]


def test_helm_leaves_field_validation_to_the_api_server_unless_asked():
    helm = RecordedHelm([listed("gitlab-runner-old")])
    apply(helm, [release(), release("gitlab-runner-old")], check_mode=True)
    apply(helm, [release()])
    assert all("--disable-openapi-validation" in args for args in helm.verbs("upgrade"))
    assert len(helm.verbs("upgrade")) == 3  # two dry runs and an install

    validating = RecordedHelm()
    apply_releases(Helm(validating, "helm", openapi_validation=True), [release()], False, workers=1)
    (upgrade,) = validating.verbs("upgrade")
    assert "--disable-openapi-validation" not in upgrade


class SlowVersionHelm(RecordedHelm):
    """helm whose `version` takes a while, so that the threads of a wave all ask before any answer."""

    def __call__(self, argv):
        if argv[1] == "version":
            time.sleep(0.05)
        return super().__call__(argv)


def test_one_helm_version_serves_a_whole_wave():
    helm = SlowVersionHelm()
    apply(helm, [release(f"pool-{n}") for n in range(6)])
    assert len(helm.verbs("upgrade")) == 6
    assert len(helm.verbs("version")) == 1


@pytest.mark.parametrize("deployed, wanted, same", [
    ("gpu-operator-v26.7.0", "gpu-operator-v26.7.0", True),
    ("gpu-operator-v26.7.0", "gpu-operator-26.7.0", True),
    ("gha-runner-scale-set-controller-0.14.2", "gha-runner-scale-set-controller-0.14.2", True),
    ("gha-runner-scale-set-0.14.2", "gha-runner-scale-set-controller-0.14.2", False),
    ("gitlab-runner-0.86.0-rc.1", "gitlab-runner-0.86.0", False),
])
def test_same_chart(deployed, wanted, same):
    assert same_chart(deployed, wanted) is same


def test_chart_ref_per_source():
    assert chart_ref(release()) == "gitlab-runner"
    assert chart_ref(release(chart_repo_url="oci://ghcr.io/actions/charts/")) == "oci://ghcr.io/actions/charts/gitlab-runner"
    assert chart_ref(release(chart_path="/charts/gitlab-runner-0.86.0.tgz")) == "/charts/gitlab-runner-0.86.0.tgz"


def test_decide_reads_null_values_as_empty():
    assert decide(release(values={}), listed("gitlab-runner-l40s"), None) == "unchanged"


def test_local_chart_is_identified_by_its_chart_yaml(tmp_path):
    import tarfile
    chart = tmp_path / "gitlab-runner"
    chart.mkdir()
    (chart / "Chart.yaml").write_text("apiVersion: v1\nname: gitlab-runner\nversion: '0.86.0'\nappVersion: v18.6.1\n")
    packaged = tmp_path / "gitlab-runner-0.86.0.tgz"
    with tarfile.open(packaged, "w:gz") as archive:
        archive.add(chart, arcname="gitlab-runner")
    for path in (chart, packaged):
        assert wanted_chart(release(chart_path=str(path))) == "gitlab-runner-0.86.0"
    helm = RecordedHelm([listed("gitlab-runner-l40s")], {"gitlab-runner-l40s": VALUES})
    assert apply(helm, [release(chart_path=str(packaged))])["releases"][0]["action"] == "unchanged"


@pytest.mark.parametrize("status, first", [("pending-install", "uninstall"), ("pending-upgrade", "rollback")])
def test_release_left_pending_by_an_interrupted_run_is_recovered_then_upgraded(status, first):
    helm = RecordedHelm([listed("gitlab-runner-l40s", status=status)], {"gitlab-runner-l40s": VALUES})
    result = apply(helm, [release()])
    assert result["releases"][0]["action"] == "upgrade" and not result["errors"]
    verbs = [args[0] for args in helm.calls if args[0] in ("uninstall", "rollback", "upgrade")]
    assert verbs == [first, "upgrade"]


def test_check_mode_leaves_a_pending_release_alone():
    helm = RecordedHelm([listed("gitlab-runner-l40s", status="pending-upgrade")], {"gitlab-runner-l40s": VALUES})
    result = apply(helm, [release()], check_mode=True)
    assert result["changed"] is True
    assert not [args for args in helm.calls if args[0] in ("uninstall", "rollback", "upgrade")]


def test_check_mode_renders_without_the_cluster_when_crds_are_not_installed_yet():
    helm = RecordedHelm(crds_missing=True)
    result = apply(helm, [release()], check_mode=True)
    assert not result["errors"]
    (render,) = helm.verbs("template")
    assert render[1:3] == ["gitlab-runner-l40s", render[2]] and "--values" in render
    assert "--api-versions" not in render


def test_the_offline_render_of_check_mode_is_told_the_apis_the_chart_tests_for():
    helm = RecordedHelm(crds_missing=True)
    apply(helm, [release(offline_api_versions=["resource.k8s.io/v1/DeviceClass"])], check_mode=True)
    (render,) = helm.verbs("template")
    flag = render.index("--api-versions")
    assert render[flag + 1] == "resource.k8s.io/v1/DeviceClass"


def test_releases_of_a_namespace_that_cannot_be_listed_are_left_alone_and_reported_once():
    helm = RecordedHelm(broken={("list", "--namespace")})
    result = apply(helm, [release("gitlab-runner-a"), release("gitlab-runner-b")])
    assert not helm.verbs("upgrade") and not helm.verbs("pull")
    assert [(r["action"], r["changed"], r["failed"]) for r in result["releases"]] == [("unknown", False, True)] * 2
    (error,) = result["errors"]
    assert "cluster unreachable" in error


def test_a_release_whose_values_cannot_be_read_is_reported_failed_and_left_alone():
    helm = RecordedHelm([listed("gitlab-runner-a"), listed("gitlab-runner-b")],
                        {"gitlab-runner-b": {**VALUES, "concurrent": 2}}, broken={("get", "values")})
    result = apply(helm, [release("gitlab-runner-a"), release("gitlab-runner-b")])
    assert [r["name"] for r in result["releases"]] == ["gitlab-runner-a", "gitlab-runner-b"]
    assert all(r["action"] == "unknown" and r["failed"] for r in result["releases"])
    assert len(result["errors"]) == 2 and not helm.verbs("upgrade")


def test_a_chart_that_cannot_be_pulled_is_reported_once_for_all_its_releases():
    helm = RecordedHelm(broken={("pull", "gitlab-runner")})
    result = apply(helm, [release("gitlab-runner-a"), release("gitlab-runner-b")])
    assert [r["failed"] for r in result["releases"]] == [True, True]
    (error,) = result["errors"]
    assert "pull" in error
    assert not helm.verbs("upgrade")


def test_a_local_charts_chart_yaml_is_read_once_for_many_releases(tmp_path, monkeypatch):
    from ansible_collections.gpuci.runners.plugins.module_utils.k8s import helm_releases
    chart = tmp_path / "gitlab-runner"
    chart.mkdir()
    (chart / "Chart.yaml").write_text("name: gitlab-runner\nversion: 0.86.0\n")
    opened = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda path, *a, **k: opened.append(str(path)) or real_open(path, *a, **k))
    helm_releases.local_chart_identity.cache_clear()
    helm = RecordedHelm([listed(f"gitlab-runner-p{n}") for n in range(5)],
                        {f"gitlab-runner-p{n}": {"changed": n} for n in range(5)})
    result = apply(helm, [release(f"gitlab-runner-p{n}", chart_path=str(chart)) for n in range(5)])
    assert [r["action"] for r in result["releases"]] == ["upgrade"] * 5
    assert opened.count(str(chart / "Chart.yaml")) == 1
