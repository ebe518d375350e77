# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The canary in GitLab mode, against the testbed's GitLab stand-in and the real GitLab Runner.

inventories/local turns GitLab mode on (gpu_canary.yml: the stand-in at
10.89.<instance>.1:18880, project gpuci/canary, ref main). The runner pools of
inventories/local are converged first (gitlab_runner.yml), so their real
runner managers poll the stand-in from the real node; then canary.yml:

- commits the canary's .gitlab-ci.yml to gpuci/canary (the stand-in's bare
  repository) once, and makes no second commit on a rerun;
- runs a pipeline whose jobs the stand-in routes by tags: the CPU pool's job
  runs for real on the real node (its runner, its image, its clone) and its
  lane is `passed` with the job's output; the GPU pools' job pods land on
  simulated (kwok) nodes, where nothing executes, so those lanes are
  `scheduled-only` with the node the scheduler chose, and whatever the job
  did there is the simulation's;
- runs the negative control (the GPU jobs' image on the CPU pool, no GPU
  request) for real on the real node, and says in the report's pipeline
  line that the simulated jobs, not the collection, failed the pipeline;
- keeps the ARC lanes on their canary Job;
- in check mode commits nothing and creates no pipeline;
- never shows its token: not at -vvv, not in the report, not in the
  cluster's ConfigMaps or Secrets, not in the stand-in's record.
"""
from __future__ import annotations

import json
import uuid

import pytest

from gitlab_runner_support import configmap_texts, secret_texts
from gpu_canary_support import load_report, schema
from helpers import LOCAL_INVENTORY, load_yaml
from lib.layout import REAL_NODE, Layout

from ansible_collections.gpuci.runners.plugins.module_utils.common.pool_keys import GPU_REQUEST_KEYS
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import merged_classes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.request import resolve_gpu_request

RUN_ID = uuid.uuid4().hex[:12]
# The stand-in takes any glpat- token: a unique one, so a leak cannot be a coincidence.
TOKEN = f"glpat-canary-gitlab-{RUN_ID}"
STANDIN_RECORD = Layout.from_environment().node_dir / "gitlab-standin.jsonl"
# This testbed instance's stand-in, where inventories/local points the canary (gpuci_testbed_gitlab_url).
STANDIN_URL = Layout.from_environment().gitlab_standin_url
COMMITS_ENDPOINT = "/api/v4/projects/:id/repository/commits"
PIPELINE_ENDPOINT = "/api/v4/projects/:id/pipeline"
GPU_POOLS = {"l40s": "l40s-cuda-1gpu", "a100-mig": "a100-cuda-mig-1g-10gb"}


def record() -> list[dict]:
    return [json.loads(line) for line in STANDIN_RECORD.read_text().splitlines()] if STANDIN_RECORD.exists() else []


def canary_vars(report_dir, **extra) -> dict:
    return dict({"gpu_canary_report_dir": str(report_dir), "gpu_canary_gitlab_api_token": TOKEN, "gpu_canary_report_charts": False,
                 "gpu_canary_fail_on_failed_lane": False}, **extra)


@pytest.fixture(scope="module")
def gitlab_canary(testbed, playbooks, real_components, nvidia_runtime_class, tmp_path_factory):
    """The pools converged, then the canary: check mode, a first run at -vvv, and a rerun.

    The GPU lanes need RuntimeClass nvidia (the GPU Operator's, which this
    test does not install): without it their job pods are refused at admission."""
    real_components.require("gitlab-runner")
    playbooks.run("gitlab_runner.yml").assert_ok()
    report_dir = tmp_path_factory.mktemp("canary-gitlab") / "report"
    mark = len(record())
    check = playbooks.run("canary.yml", extra_vars=canary_vars(report_dir), check=True, verbosity=3)
    after_check = len(record())
    first = playbooks.run("canary.yml", extra_vars=canary_vars(report_dir), verbosity=3)
    after_first = len(record())
    first_report = load_report(report_dir)
    first_markdown = (report_dir / "proof-report.md").read_text()
    second = playbooks.run("canary.yml", extra_vars=canary_vars(report_dir))
    yield {"check": check, "first": first, "second": second, "report": first_report, "markdown": first_markdown,
           "second_report": load_report(report_dir), "mark": mark, "after_check": after_check,
           "after_first": after_first, "report_dir": report_dir}
    playbooks.run("canary.yml", extra_vars=canary_vars(report_dir, gpu_canary_state="absent"))


def lanes(report: dict) -> dict:
    return {lane["name"]: lane for lane in report["lanes"]}


def gpu_requests() -> dict:
    """Each GPU pool of inventories/local, resolved as the gitlab_runner role resolves it: class, selector, resource."""
    pools = load_yaml(LOCAL_INVENTORY / "group_vars" / "all" / "gitlab_runner.yml")["gitlab_runner_pools"]
    # inventories/local may lay classes of its own over the catalogue's, in any of its group_vars files.
    defined = [load_yaml(path) or {} for path in sorted((LOCAL_INVENTORY / "group_vars" / "all").glob("*.yml"))]
    classes = merged_classes(next((found["gpu_classes"] for found in defined if "gpu_classes" in found), None))
    return {pool["name"]: resolve_gpu_request({key: pool[key] for key in GPU_REQUEST_KEYS if key in pool}, classes,
                                              "gitlab_runner_pools[name=%s]" % pool["name"])
            for pool in pools if pool.get("gpu_class")}


def test_check_mode_commits_nothing_and_runs_no_pipeline(gitlab_canary):
    gitlab_canary["check"].assert_ok()
    mark, after = gitlab_canary["mark"], gitlab_canary["after_check"]
    checked = record()[mark:after]
    assert not [r for r in checked if r["endpoint"] in (COMMITS_ENDPOINT, PIPELINE_ENDPOINT)], checked
    assert "Check mode: .gitlab-ci.yml" in gitlab_canary["check"].output


def test_first_run_commits_once_and_the_rerun_not_again(gitlab_canary):
    gitlab_canary["first"].assert_ok()
    gitlab_canary["second"].assert_ok()
    # The file may already be there from an earlier session; then neither run commits.
    first_commit = gitlab_canary["report"]["gitlab"]["committed"]
    assert gitlab_canary["second_report"]["gitlab"]["committed"] is None
    committed = [r for r in record()[gitlab_canary["after_first"]:] if r["endpoint"] == COMMITS_ENDPOINT]
    assert committed == [], "the rerun made a second commit"
    assert gitlab_canary["second_report"]["gitlab"]["pipeline_id"] != gitlab_canary["report"]["gitlab"]["pipeline_id"]
    if first_commit:
        assert any(r["endpoint"] == COMMITS_ENDPOINT and r.get("commit") == first_commit
                   for r in record()[gitlab_canary["after_check"]:gitlab_canary["after_first"]])


def test_the_cpu_lane_passed_through_the_real_runner_with_the_job_output(gitlab_canary):
    report = gitlab_canary["report"]
    cpu = lanes(report)["cpu"]
    assert cpu["result"] == "passed", cpu
    assert cpu["proved_by"] == ["GitLab job"]
    (job,) = cpu["gitlab_jobs"]
    assert (job["pool"], job["status"], job["result"]) == ("cpu", "success", "passed"), job
    assert job["job_id"] and job["job_url"].endswith(f"/gpuci/canary/-/jobs/{job['job_id']}")
    assert job["pipeline_id"] == report["gitlab"]["pipeline_id"]
    assert job["runner"] and job["runner"]["description"] == "cpu", job["runner"]
    # The real runner's job pod, read from the cluster during the wait, on the real node.
    assert job["pod"] and job["pod"].startswith("runner-"), job
    assert job["node"] == REAL_NODE and job["node_simulated"] is False, job
    assert any(line.startswith("gpu-canary: CPU job ran on ") for line in job["evidence"]), job["evidence"]
    assert "gpu-canary: the checkout holds .gitlab-ci.yml" in job["evidence"], "the job cloned the canary project"
    assert "proved" != cpu["result"], "a CPU lane asks for no device"


def test_gpu_lanes_are_scheduled_only_on_the_node_the_scheduler_chose(gitlab_canary):
    report = gitlab_canary["report"]
    simulated = set(report["cluster"]["simulated_nodes"])
    for pool, lane_name in GPU_POOLS.items():
        lane = lanes(report)[lane_name]
        job = next(j for j in lane["gitlab_jobs"] if j["pool"] == pool)
        assert job["result"] == "scheduled-only", job
        assert job["node"] in simulated and job["node_simulated"], job
        assert "the simulation's, not the lane's" in job["reason"], job["reason"]
        assert lane["result"] != "proved", lane


def test_each_gpu_job_pod_landed_on_a_node_of_its_class_with_its_pool_s_gpu_limit(gitlab_canary, testbed):
    """The pod the real runner made for each GPU pool's job, as the module read it from the API server during the
    wait: on a node whose labels match the class's selector, its build container (alone) limited to the pool's GPUs."""
    requests = gpu_requests()
    assert set(requests) == set(GPU_POOLS), "the GPU pools of inventories/local"
    report = gitlab_canary["report"]
    for pool, request in requests.items():
        job = next(j for j in lanes(report)[GPU_POOLS[pool]]["gitlab_jobs"] if j["pool"] == pool)
        assert job["runner"] and job["pod"] and job["pod"].startswith("runner-"), job
        node = testbed.get("v1", "Node", job["node"])
        assert node is not None, job
        labels = node["metadata"].get("labels") or {}
        assert request.node_selector and all(labels.get(key) == value for key, value in request.node_selector.items()), (
            pool, job["node"], request.node_selector, labels)
        # nvidia.com/gpu: N for a pool of whole GPUs, nvidia.com/mig-<profile>: 1 for a MIG pool.
        assert request.resource == ("nvidia.com/mig-1g.10gb" if pool == "a100-mig" else "nvidia.com/gpu"), request
        assert job["device_limits"] == {"build": {request.resource: str(request.count)}}, job


def test_the_negative_control_ran_for_real_on_the_cpu_pool_and_held(gitlab_canary):
    control = gitlab_canary["report"]["gitlab"]["negative_control"]
    assert (control["result"], control["pool"], control["runner"]["description"]) == ("holds", "cpu", "cpu"), control
    assert (control["node"], control["node_simulated"]) == (REAL_NODE, False), control
    assert control["pod"] and control["pod"].startswith("runner-"), control


def test_the_pipeline_line_says_the_simulated_jobs_failed_it_not_the_collection(gitlab_canary):
    gitlab = gitlab_canary["report"]["gitlab"]
    outcome = gitlab["pipeline_outcome"]
    if gitlab["pipeline_status"] != "success":
        simulated = sorted(f"gpu-canary-{pool}" for pool in GPU_POOLS)
        assert outcome.startswith(f"{gitlab['pipeline_status']}, only because jobs {', '.join(simulated)} ran on "
                                  "simulated (kwok) nodes"), outcome
        assert "scheduled-only (not proved, not passed)" in outcome
    assert f"| pipeline | [{gitlab['pipeline_id']}]({gitlab['pipeline_url']}), {outcome} |" in gitlab_canary["markdown"]


def test_arc_lanes_keep_their_canary_job(gitlab_canary):
    arc = [lane for lane in gitlab_canary["report"]["lanes"] if lane["serves"]["arc_scale_sets"]]
    assert arc, "inventories/local has ARC scale sets with a GPU"
    for lane in arc:
        assert "canary Job" in lane["proved_by"], lane
        assert lane["job"], lane


def test_report_matches_the_schema_and_names_pipeline_and_jobs(gitlab_canary):
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(gitlab_canary["report"], schema())
    markdown = gitlab_canary["markdown"]
    pipeline = gitlab_canary["report"]["gitlab"]["pipeline_url"]
    assert f"| pipeline | [{gitlab_canary['report']['gitlab']['pipeline_id']}]({pipeline})" in markdown
    assert "Runner: cpu (id " in markdown


def test_the_token_appears_nowhere(gitlab_canary, testbed):
    for run in ("check", "first", "second"):
        assert TOKEN not in gitlab_canary[run].output and RUN_ID not in gitlab_canary[run].output, run
    for path in gitlab_canary["report_dir"].rglob("*"):
        if path.is_file():
            assert RUN_ID not in path.read_text(errors="replace"), path
    assert RUN_ID not in STANDIN_RECORD.read_text()
    for where, text in {**secret_texts(testbed), **configmap_texts(testbed)}.items():
        assert RUN_ID not in text, where


def test_a_wrong_token_fails_before_any_commit_naming_the_variable(testbed, playbooks, tmp_path):
    mark = len(record())
    run = playbooks.run("canary.yml", extra_vars=canary_vars(tmp_path, gpu_canary_gitlab_api_token="wrong-token"))
    run.assert_failed_with(f"gpu_canary_gitlab_api_token: GitLab at {STANDIN_URL} refused the token (401")
    assert "wrong-token" not in run.output
    assert not [r for r in record()[mark:] if r["endpoint"] in (COMMITS_ENDPOINT, PIPELINE_ENDPOINT)]


def test_an_unknown_project_fails_naming_the_variable(testbed, playbooks, tmp_path):
    run = playbooks.run("canary.yml", extra_vars=canary_vars(tmp_path, gpu_canary_gitlab_project="nobody/nothing"))
    run.assert_failed_with(f"gpu_canary_gitlab_project: GitLab at {STANDIN_URL} has no project nobody/nothing")
