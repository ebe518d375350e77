# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The arc_runners role's plan (controller only when wanted, complete scale set values, hook ConfigMaps,
Secret names) and the credential Secrets filled in apart from it."""

import base64

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.credential_secrets import (
    arc_runners_credential_secrets,
)
from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners import runner_template as arc_runner_template_module
from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.plan import (
    NOTHING_DECLARED,
    arc_runners_plan,
    controller_fullname,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

TOKEN = "ghp_PLAN-SECRET"
KEY = "-----BEGIN KEY----- PLAN-SECRET"
URL = "https://github.com/octo/repo"


def settings(*scale_sets, **overrides):
    base = {
        "arc_runners_scale_sets": list(scale_sets),
        "arc_runners_state": "present",
        "arc_runners_scale_set_namespace": "arc-runners",
        "arc_runners_runtime_class": None,
        "arc_runners_controller_enabled": None,
        "arc_runners_controller_release_name": "arc",
        "arc_runners_controller_namespace": "arc-systems",
        "arc_runners_controller_values": {"replicaCount": 1},
        "arc_runners_controller_service_account": {},
        "arc_runners_scale_set_values": {"listenerTemplate": {"spec": {}}},
        "arc_runners_chart_version": "0.14.2",
        "arc_runners_chart_repo_url": "oci://ghcr.io/actions/actions-runner-controller-charts",
        "arc_runners_chart_path": "",
        "arc_runners_wait_timeout": 300,
        "arc_runners_force_finalizers": False,
    }
    base.update(overrides)
    return base


L40S = {"name": "l40s", "github_config_url": URL, "github_token": TOKEN, "gpu_class": "l40s", "gpus": 1,
        "labels": ["gpu"], "runner_group": "gpu", "min_runners": 0, "max_runners": 4}
K8S = {"name": "k8s-mode", "namespace": "arc-k8s", "github_config_url": URL, "github_config_secret": "pre-made",
       "container_mode": "kubernetes", "work_volume_claim": {"size": "10Gi", "storage_class": "fast"}}
APP = {"name": "app", "github_config_url": URL, "container_mode": "dind", "github_app_id": 1,
       "github_app_installation_id": "2", "github_app_private_key": KEY}


def test_no_scale_sets_plan_no_controller_unless_asked():
    assert arc_runners_plan(settings())["controller"] is None
    assert arc_runners_plan(settings())["namespaces"] == []
    asked = arc_runners_plan(settings(arc_runners_controller_enabled=True))
    assert asked["controller"]["chart"] == "gha-runner-scale-set-controller"
    assert asked["namespaces"] == ["arc-systems"]
    assert arc_runners_plan(settings(L40S, arc_runners_controller_enabled=False))["controller"] is None


def test_the_plan_notes_that_nothing_of_arc_is_declared_only_when_present_and_installing_nothing():
    assert arc_runners_plan(settings())["notes"] == [NOTHING_DECLARED]
    assert arc_runners_plan(settings(arc_runners_state="absent"))["notes"] == []
    assert arc_runners_plan(settings(arc_runners_controller_enabled=True))["notes"] == []
    assert arc_runners_plan(settings(L40S))["notes"] == []


def test_controller_names_the_service_account_every_scale_set_uses():
    plan = arc_runners_plan(settings(L40S, arc_runners_metrics=False))
    assert plan["controller"]["values"] == {"replicaCount": 1,
                                            "serviceAccount": {"create": True, "name": "arc-gha-rs-controller"}}
    account = plan["releases"][0]["values"]["controllerServiceAccount"]
    assert account == {"name": "arc-gha-rs-controller", "namespace": "arc-systems"}
    assert controller_fullname("my-gha-rs-controller") == "my-gha-rs-controller"


def test_scale_set_release_values_are_complete():
    plan = arc_runners_plan(settings(L40S, K8S, APP))
    l40s, k8s, app = plan["releases"]
    assert (l40s["name"], l40s["namespace"], l40s["chart"]) == ("l40s", "arc-runners", "gha-runner-scale-set")
    values = l40s["values"]
    assert values["githubConfigUrl"] == URL and values["githubConfigSecret"] == "l40s-github-config"
    assert (values["runnerGroup"], values["minRunners"], values["maxRunners"]) == ("gpu", 0, 4)
    assert values["scaleSetLabels"] == ["gpu"] and "containerMode" not in values
    assert values["listenerTemplate"] == {"spec": {}}
    assert values["template"]["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": "1"}
    assert k8s["values"]["githubConfigSecret"] == "pre-made"
    assert k8s["values"]["containerMode"] == {"type": "kubernetes", "kubernetesModeWorkVolumeClaim": {
        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}, "storageClassName": "fast"}}
    assert app["values"]["containerMode"] == {"type": "dind"}
    assert TOKEN not in repr(plan) and "PLAN-SECRET" not in repr(plan)


def test_hook_configmap_only_in_kubernetes_mode_and_secrets_only_when_the_role_keeps_them():
    plan = arc_runners_plan(settings(L40S, K8S, APP))
    assert [(c["metadata"]["namespace"], c["metadata"]["labels"]["gpuci.runners/arc-scale-set"])
            for c in plan["configmaps"]] == [("arc-k8s", "k8s-mode")]
    assert [s["name"] for s in plan["secrets"]] == ["l40s-github-config", "app-github-config"]
    assert plan["namespaces"] == ["arc-systems", "arc-runners", "arc-k8s"]
    assert {name: (entry["secret"], entry["owns_secret"], entry["hook_configmap"])
            for name, entry in plan["by_scale_set"].items()} == {
        "l40s": ("l40s-github-config", True, None), "k8s-mode": ("pre-made", False, "k8s-mode-hook-template"),
        "app": ("app-github-config", True, None)}


def test_local_charts_come_from_the_chart_directory():
    plan = arc_runners_plan(settings(L40S, arc_runners_chart_path="/mirror/arc"))
    assert plan["controller"]["chart_path"] == "/mirror/arc/gha-runner-scale-set-controller-0.14.2.tgz"
    assert plan["releases"][0]["chart_path"] == "/mirror/arc/gha-runner-scale-set-0.14.2.tgz"
    assert plan["chart_paths"] == {"controller": "/mirror/arc/gha-runner-scale-set-controller-0.14.2.tgz",
                                   "scale_set": "/mirror/arc/gha-runner-scale-set-0.14.2.tgz"}
    assert arc_runners_plan(settings(L40S))["chart_paths"] == {"controller": None, "scale_set": None}


def test_a_chart_directory_without_both_charts_is_a_problem(tmp_path):
    (tmp_path / "gha-runner-scale-set-controller-0.14.2.tgz").write_bytes(b"chart")
    assert arc_runners_plan(settings(L40S, arc_runners_chart_path=str(tmp_path)))["problems"] == [
        "arc_runners_chart_path %s must hold gha-runner-scale-set-controller-0.14.2.tgz and "
        "gha-runner-scale-set-0.14.2.tgz." % tmp_path]
    (tmp_path / "gha-runner-scale-set-0.14.2.tgz").write_bytes(b"chart")
    assert arc_runners_plan(settings(L40S, arc_runners_chart_path=str(tmp_path)))["problems"] == []
    # Nothing of ARC planned, nothing to install from it.
    assert arc_runners_plan(settings(arc_runners_chart_path="/mirror/arc"))["problems"] == []


def test_absent_scale_sets_and_role_state_absent_plan_no_release():
    plan = arc_runners_plan(settings(dict(L40S, state="absent"), K8S))
    assert [r["name"] for r in plan["releases"]] == ["k8s-mode"]
    assert [r["name"] for r in plan["removals"]] == ["l40s"]
    gone = arc_runners_plan(settings(L40S, K8S, arc_runners_state="absent", arc_runners_force_finalizers=True))
    assert gone["releases"] == [] and gone["controller"] is None
    assert [(r["name"], r["namespace"], r["state"], r["wait"]) for r in gone["removals"]] == [
        ("l40s", "arc-runners", "absent", False), ("k8s-mode", "arc-k8s", "absent", False)]


def test_the_objects_of_removed_scale_sets_are_selected_per_namespace_by_our_labels():
    other = dict(L40S, name="a100", gpu_class="a100")
    plan = arc_runners_plan(settings(L40S, K8S, other, arc_runners_state="absent"))
    ours = ["app.kubernetes.io/part-of=gpuci-runners", "app.kubernetes.io/managed-by=gpuci.runners"]
    assert plan["removed_selectors"] == [
        {"namespace": "arc-runners", "label_selectors": ours + ["gpuci.runners/arc-scale-set in (l40s,a100)"]},
        {"namespace": "arc-k8s", "label_selectors": ours + ["gpuci.runners/arc-scale-set in (k8s-mode)"]}]
    assert arc_runners_plan(settings(L40S))["removed_selectors"] == []


def test_namespaces_the_role_creates_carry_labels_it_finds_them_by():
    plan = arc_runners_plan(settings(L40S))
    assert plan["namespace_labels"]["gpuci.runners/created-by"] == "arc_runners"
    assert plan["namespace_labels"]["app.kubernetes.io/part-of"] == "gpuci-runners"
    assert plan["namespace_selectors"] == ["%s=%s" % item for item in plan["namespace_labels"].items()]


def test_a_bad_scale_set_is_named_by_its_inventory_path_and_nothing_is_planned():
    plan = arc_runners_plan(settings(dict(L40S, gpus=0), dict(K8S, github_config_url="github.com/org")))
    assert list(plan) == ["problems"]
    assert [text.partition(": ")[0] for text in plan["problems"]] == [
        "arc_runners_scale_sets[name=l40s].gpus", "arc_runners_scale_sets[name=k8s-mode].github_config_url"]
    assert TOKEN not in repr(plan)


def test_credential_secrets_hold_the_token_or_the_app_keys():
    plan = arc_runners_plan(settings(L40S, APP))
    token, app = arc_runners_credential_secrets({"secrets": plan["secrets"], "scale_sets": [L40S, APP]})
    assert {k: base64.b64decode(v).decode() for k, v in token["data"].items()} == {"github_token": TOKEN}
    assert {k: base64.b64decode(v).decode() for k, v in app["data"].items()} == {
        "github_app_id": "1", "github_app_installation_id": "2", "github_app_private_key": KEY}
    assert token["metadata"]["labels"]["gpuci.runners/arc-scale-set"] == "l40s"


def test_credential_secrets_refuse_a_scale_set_without_credentials_naming_only_it():
    plan = arc_runners_plan(settings(L40S))
    with pytest.raises(ValidationError, match=r"arc_runners_scale_sets\[name=l40s\]") as caught:
        arc_runners_credential_secrets({"secrets": plan["secrets"], "scale_sets": [dict(L40S, github_token="")]})
    assert "ghp_" not in str(caught.value)


def test_the_chart_source_is_checked_only_when_something_of_arc_is_installed():
    with pytest.raises(ValidationError, match=r"^arc_runners_chart_version: must be a pinned chart version"):
        arc_runners_plan(settings(L40S, arc_runners_chart_version="0.14.x"))
    with pytest.raises(ValidationError, match=r"^arc_runners_chart_repo_url: must be an http\(s\):// or oci://"):
        arc_runners_plan(settings(arc_runners_controller_enabled=True, arc_runners_chart_repo_url="ghcr.io/actions"))
    assert arc_runners_plan(settings(arc_runners_chart_version="0.14.x"))["releases"] == []
    assert arc_runners_plan(settings(L40S, arc_runners_state="absent", arc_runners_chart_version="0.14.x"))["releases"] == []


def test_release_records_are_read_for_the_controller_and_every_scale_set_removed_ones_too():
    plan = arc_runners_plan(settings(L40S, dict(K8S, state="absent")))
    assert plan["release_record_selectors"][-1] == "name in (arc,l40s,k8s-mode)"


def test_chart_values_the_role_builds_are_problems():
    (problem,) = arc_runners_plan(settings(L40S, arc_runners_scale_set_values={"template": {}, "minRunners": 2}))["problems"]
    assert problem.startswith("arc_runners_scale_set_values may not set template, minRunners")
    assert arc_runners_plan(settings(L40S))["problems"] == []
    assert arc_runners_plan(settings(L40S, arc_runners_state="absent",
                                     arc_runners_scale_set_values={"template": {}}))["problems"] == []


@pytest.mark.parametrize("overrides, refused", [
    ({"arc_runners_controller_enabled": False}, True),
    ({"arc_runners_controller_enabled": False, "arc_runners_controller_service_account": {"name": "arc"}}, True),
    ({"arc_runners_controller_enabled": False,
      "arc_runners_controller_service_account": {"name": "arc", "namespace": "elsewhere"}}, False),
    ({"arc_runners_controller_service_account": {"name": "arc", "namespace": "elsewhere"}}, True),
    ({"arc_runners_controller_service_account": {"name": "arc", "namespace": "arc-systems"}}, False),
    ({}, False),
])
def test_the_controller_service_account_must_fit_the_controller(overrides, refused):
    problems = arc_runners_plan(settings(L40S, **overrides))["problems"]
    assert bool(problems) is refused
    assert all(p.startswith("arc_runners_controller_service_account must name the service account") for p in problems)


def test_each_pod_template_is_rendered_once_and_is_what_its_release_carries(calls):
    real_template = arc_runner_template_module.arc_runner_template
    rendered = calls(arc_runner_template_module, "arc_runner_template")
    plan = arc_runners_plan(settings(L40S, K8S, dict(APP, state="absent")))
    assert rendered == ["l40s", "k8s-mode"]
    expected = real_template(dict(plan["scale_sets"][0]), None, "scale_set")["template"]
    assert plan["by_scale_set"]["l40s"]["template"] == expected


def test_a_role_that_tears_down_renders_no_template(monkeypatch):
    monkeypatch.setattr(arc_runner_template_module, "arc_runner_template", pytest.fail)
    assert arc_runners_plan(settings(dict(L40S, gpus=0), arc_runners_state="absent"))["problems"] == []


def test_template_problems_come_in_the_inventory_order_among_the_other_rules():
    plan = arc_runners_plan(settings(dict(L40S, github_config_url="nope"), dict(K8S, gpus=-1), dict(APP, max_runners=-1)))
    assert [text.partition(": ")[0] for text in plan["problems"]] == [
        "arc_runners_scale_sets[name=l40s].github_config_url", "arc_runners_scale_sets[name=k8s-mode].gpus",
        "arc_runners_scale_sets[name=app].max_runners"]


def test_the_controller_turns_on_the_metrics_arc_documents_unless_the_user_sets_them():
    values = arc_runners_plan(settings(L40S))["controller"]["values"]
    assert values["metrics"] == {"controllerManagerAddr": ":8080", "listenerAddr": ":8080",
                                 "listenerEndpoint": "/metrics"}
    own = {"replicaCount": 1, "metrics": {"controllerManagerAddr": ":9090", "listenerAddr": ":9090",
                                          "listenerEndpoint": "/m"}}
    assert arc_runners_plan(settings(L40S, arc_runners_controller_values=own))["controller"]["values"]["metrics"] == \
        own["metrics"]


def test_pod_monitors_of_the_controller_and_the_listeners_honour_arcs_labels():
    plan = arc_runners_plan(settings(L40S, arc_runners_pod_monitor_labels={"release": "kube-prometheus-stack"}))
    controller, listeners = plan["monitors"]
    assert [m["metadata"]["name"] for m in plan["monitors"]] == ["gpuci-arc-controller", "gpuci-arc-listeners"]
    for monitor in plan["monitors"]:
        assert monitor["metadata"]["namespace"] == "arc-systems"
        assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
        assert monitor["metadata"]["labels"]["gpuci.runners/monitors"] == "arc-runners"
        assert monitor["spec"]["namespaceSelector"] == {"matchNames": ["arc-systems"]}
        assert monitor["spec"]["podMetricsEndpoints"][0]["port"] == "metrics"
    assert controller["spec"]["selector"]["matchLabels"] == {
        "app.kubernetes.io/part-of": "gha-rs-controller", "app.kubernetes.io/component": "controller-manager",
        "app.kubernetes.io/instance": "arc"}
    assert "honorLabels" not in controller["spec"]["podMetricsEndpoints"][0]
    assert listeners["spec"]["selector"]["matchLabels"] == {"app.kubernetes.io/component": "runner-scale-set-listener"}
    assert listeners["spec"]["podMetricsEndpoints"][0] == {"port": "metrics", "path": "/metrics", "honorLabels": True}
    assert plan["monitor_selectors"] == ["app.kubernetes.io/part-of=gpuci-runners",
                                         "app.kubernetes.io/managed-by=gpuci.runners", "gpuci.runners/monitors=arc-runners"]


def test_no_monitors_without_a_controller_of_ours_or_metrics_or_when_off():
    for overrides in ({"arc_runners_controller_enabled": False,
                       "arc_runners_controller_service_account": {"name": "c", "namespace": "arc-systems"}},
                      {"arc_runners_metrics": False}, {"arc_runners_pod_monitors": "off"}):
        plan = arc_runners_plan(settings(L40S, **overrides))
        assert plan["monitors"] == [] and plan["pod_monitors"]["mode"] == "off", overrides
        # Ours of an earlier run are still read, to be pruned.
        assert [r["key"] for r in plan["reads"] if "monitor" in r["key"]] == ["pod_monitors"]
    keys = [r["key"] for r in arc_runners_plan(settings(L40S))["reads"] if "monitor" in r["key"]]
    assert keys == ["pod_monitor_crd", "pod_monitors"]


@pytest.mark.parametrize("overrides, expected", [
    ({"arc_runners_pod_monitors": "sometimes"}, "arc_runners_pod_monitors: must be one of auto, on, off"),
    ({"arc_runners_pod_monitor_labels": {"release": False}}, "arc_runners_pod_monitor_labels.release: must be a string"),
    ({"arc_runners_metrics": False, "arc_runners_pod_monitors": "on"},
     "arc_runners_pod_monitors: is on, but arc_runners_metrics is false"),
])
def test_bad_monitoring_settings_are_named(overrides, expected):
    (problem,) = arc_runners_plan(settings(L40S, **overrides))["problems"]
    assert problem.startswith(expected)
