# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The execution environment, built by ansible-builder, runs the AWX job templates against the testbed.

Each job template of awx/job_templates.yml is launched the way AWX launches
it (tools/awx/launch.py): project sync, inventory update in the EE,
credentials injected from awx/credential_types.yml, survey answers, then
ansible-runner running the playbook in the EE container. The testbed's GPU
nodes are simulated (kwok), so the canary reports lanes scheduled, never
proved; what these tests prove is that the EE and the templates' wiring work.
Every job runs at verbosity 1 (Verbose, as a template may be set), so the
job events hold -v's output too: no secret may be in them in any form
(plain or base64: tests/integration/secret_forms.py), the teardown's included.
"""
from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass

import pytest
import yaml

import build_ee
import launch
from helpers import helm_releases
from lib.images import pinned
from secret_forms import leaks
from lib.layout import Layout

INVENTORY = "inventories/local/hosts.yml"
GROUP_VARS = launch.REPO / "inventories" / "local" / "group_vars" / "all"
# Survey answers given at launch: one per template that has questions worth
# checking; every other question keeps its default, as an unanswered survey does.
CANARY_REPORT_DIR = "awx-canary-report"
# AWX's Verbose (-v): each task's result in the job's output, a deletion's answer included.
VERBOSITY = 1


@dataclass
class Job:
    result: launch.JobResult
    releases_after: set[str]  # deployed Helm releases on the testbed right after the job


def _declared(role: str, key: str) -> list[dict]:
    return yaml.safe_load((GROUP_VARS / f"{role}.yml").read_text())[key]


def _in_image(image: str, *argv: str) -> str:
    proc = subprocess.run(["docker", "run", "--rm", "--network=host", image, *argv],
                          capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def kubeconfig_credential(testbed) -> dict:
    return {"kubeconfig": launch.self_contained_kubeconfig(Layout.from_environment().kubeconfig)}


@pytest.fixture(scope="module")
def jobs(ee_image, testbed, kubeconfig_credential, tmp_path_factory) -> dict[str, Job]:
    """plan, site, site again, canary, teardown: one template at a time, in the order a user runs them."""
    work = tmp_path_factory.mktemp("awx-jobs")
    credentials = {"kubeconfig": kubeconfig_credential}
    results = {}
    for run, template, answers in (("plan", "plan", {"gitlab_runner_chart_version": "0.86.0"}),
                                   ("site", "site", {}), ("site-again", "site", {}),
                                   ("canary", "canary", {"gpu_canary_report_dir": CANARY_REPORT_DIR}),
                                   ("teardown", "teardown", {})):
        result = launch.launch(template, ee_image, INVENTORY, credentials, work / run, answers, verbosity=VERBOSITY)
        results[run] = Job(result, {r["name"] for r in helm_releases(testbed) if r["status"] == "deployed"})
    return results


def test_the_ee_holds_the_collection_and_the_pinned_tools(ee_image):
    assert "gpuci.runners" in _in_image(ee_image, "ansible-galaxy", "collection", "list", "gpuci.runners")
    collections = _in_image(ee_image, "ansible-galaxy", "collection", "list", "--format", "json")
    found = {name for path in json.loads(collections).values() for name in path}
    assert {"kubernetes.core", "community.general", "awx.awx"} <= found, found
    assert pinned("HELM4_VERSION") in _in_image(ee_image, "helm", "version", "--short")
    assert pinned("KUBERNETES_VERSION") in _in_image(ee_image, "kubectl", "version", "--client")


def test_the_image_tag_follows_the_build_context(ee_image):
    # An unchanged checkout reuses the image: the tag is a hash of what it is built from.
    assert ee_image == build_ee.image_reference(next(build_ee.COLLECTION_DIR.glob("gpuci-runners-*.tar.gz")))


def test_plan_shows_the_releases_and_changes_nothing(jobs):
    plan = jobs["plan"].result
    assert (plan.status, plan.rc) == ("successful", 0)
    assert not any(plan.stats["changed"].values()), plan.stats["changed"]
    shown = json.dumps([event.get("stdout", "") for event in plan.events])
    assert "release gitlab-runner/gitlab-runner-l40s: chart gitlab-runner 0.86.0 (gitlab_runner)" in shown, shown[-3000:]
    assert "gitlab-runner-l40s" not in jobs["plan"].releases_after


def test_site_converges_the_testbed_from_the_ee(jobs):
    site = jobs["site"].result
    assert (site.status, site.rc) == ("successful", 0), site.project
    assert not site.stats["failures"] and site.stats["changed"], site.stats
    # One release per pool and scale set the inventory declares, the operator and ARC's controller.
    expected = {"gpu-operator", "arc",
                *(f"gitlab-runner-{pool['name']}" for pool in _declared("gitlab_runner", "gitlab_runner_pools")),
                *(scale_set["name"] for scale_set in _declared("arc_runners", "arc_runners_scale_sets"))}
    assert jobs["site"].releases_after == expected


def test_a_second_site_run_changes_nothing(jobs):
    again = jobs["site-again"].result
    assert (again.status, again.rc) == ("successful", 0)
    assert not any(again.stats["changed"].values()), again.stats["changed"]


def test_the_canary_writes_its_report_where_the_survey_answer_says(jobs):
    canary = jobs["canary"].result
    assert (canary.status, canary.rc) == ("successful", 0)
    report = json.loads((canary.project / CANARY_REPORT_DIR / "proof-report.json").read_text())
    # The EE's job sees no testbed state, so the runner managers land on
    # simulated nodes and inventories/local leaves the canary's GitLab mode
    # off: every lane is proved by a canary Job, and every lane's node is
    # simulated here: scheduled by the real scheduler, never run, so never proved.
    assert "gitlab" not in report or not report["gitlab"], report.get("gitlab")
    assert report["lanes"] and {lane["result"] for lane in report["lanes"]} == {"scheduled-only"}, report["summary"]


def test_teardown_removes_what_site_made(jobs):
    assert (jobs["teardown"].result.status, jobs["teardown"].result.rc) == ("successful", 0)
    assert jobs["site"].releases_after and not jobs["teardown"].releases_after


def test_no_secret_reaches_a_job_event(jobs, kubeconfig_credential):
    kubeconfig = yaml.safe_load(kubeconfig_credential["kubeconfig"])
    secrets = [user["user"]["token"] for user in kubeconfig["users"]]
    secrets += [pool["token"] for pool in _declared("gitlab_runner", "gitlab_runner_pools") if pool.get("token")]
    secrets += [scale_set["github_token"] for scale_set in _declared("arc_runners", "arc_runners_scale_sets")
                if scale_set.get("github_token")]
    secrets.append(yaml.safe_load((GROUP_VARS / "gpu_canary.yml").read_text())["gpu_canary_gitlab_api_token"])
    secrets = list(dict.fromkeys(secrets))
    assert all(len(s) > 8 for s in secrets), "the check needs real secret strings"
    assert set(jobs) >= {"site", "teardown"}, "the check covers a converge and a removal"
    for run, job in jobs.items():
        assert job.result.events, f"{run}: no events recorded"
        # Only -v says which config file (or none) ansible-playbook uses.
        assert any("config file" in (event.get("stdout") or "") for event in job.result.events), f"{run} did not log at -v"
        leaked = leaks({f"{run} job events": json.dumps(job.result.events)}, secrets)
        assert not leaked, leaked
