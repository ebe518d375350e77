# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""canary_gitlab_pipeline against the testbed's GitLab stand-in, with a loop that STANDS IN FOR A RUNNER.

The stand-in (tools/testbed/gitlab_standin.py) serves GitLab's API subset
for real (commits into a bare git repository, pipelines from the committed
.gitlab-ci.yml, jobs routed by tags); FakeRunner (gitlab_standin_runner.py)
takes jobs as a runner does and reports canned traces. The real GitLab
Runner runs the canary's jobs in tests/integration/test_canary_gitlab.py.
"""
import json
import sys
from pathlib import Path

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary import gitlab_pipeline as canary_gitlab_pipeline
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.ci_snippets import NEGATIVE_CONTROL_JOB, canary_ci
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.lanes import canary_lanes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.proof_report import proof_report
from ansible_collections.gpuci.runners.plugins.plugin_utils.ci_yaml import ci_yaml

sys.path.insert(0, str(Path(__file__).parent))
from gitlab_standin_runner import FakeRunner, StandIn, free_port  # noqa: E402

TOKEN = "glpat-unit-canary-token-MARK7f3a"
CPU_TOKEN = "glrt-unit-cpu-runner"
L40S_TOKEN = "glrt-unit-l40s-runner"
POOLS = [{"name": "l40s", "gpu_class": "l40s", "gpus": 1, "tags": ["gpu", "l40s"], "token": "glrt-never-read"},
         {"name": "a100-mig", "gpu_class": "a100", "mig_profile": "1g.10gb", "tags": ["gpu", "a100"]},
         {"name": "cpu", "tags": ["cpu"], "image": "gpuci.local/testbed/debian:bookworm"}]
NODES = [{"metadata": {"name": "kwok-l40s-0", "annotations": {"kwok.x-k8s.io/node": "fake"},
                       "labels": {"nvidia.com/gpu.product": "NVIDIA-L40S"}},
          "status": {"allocatable": {"nvidia.com/gpu": "8"}}},
         {"metadata": {"name": "real-node", "labels": {}}}]
NEGATIVE_OUTPUT = ("gpu-canary: negative control on runner-pod, a pod without a GPU request\n"
                   "gpu-canary: negative control holds: no /dev/nvidia* or /dev/dri/renderD* device node, no nvidia-smi\n")
CPU_OUTPUT = ("$ echo \"gpu-canary: CPU job ran on $(hostname) ($(uname -srm))\"\n"
              "gpu-canary: CPU job ran on runner-pod (Linux 6.1.0 x86_64)\n"
              "$ test -f .gitlab-ci.yml && echo 'gpu-canary: the checkout holds .gitlab-ci.yml'\n"
              "gpu-canary: the checkout holds .gitlab-ci.yml\n")


@pytest.fixture
def standin(tmp_path):
    server = StandIn(tmp_path, [
        {"token": CPU_TOKEN, "description": "cpu", "tag_list": ["cpu"], "run_untagged": False},
        {"token": L40S_TOKEN, "description": "l40s", "tag_list": ["gpu", "nvidia", "cuda", "l40s"],
         "run_untagged": False}])
    yield server
    server.stop()


@pytest.fixture
def runners(standin):
    # No runner has the a100 pool's tags [gpu, a100]: its job stays pending.
    started = [FakeRunner(standin.url, CPU_TOKEN, {"gpu-canary-cpu": (CPU_OUTPUT, "success"),
                                                   NEGATIVE_CONTROL_JOB: (NEGATIVE_OUTPUT, "success")}),
               FakeRunner(standin.url, L40S_TOKEN, {"gpu-canary-l40s": ("ERROR: timed out waiting for pod\n", "failed")})]
    for runner in started:
        runner.start()
    yield started
    for runner in started:
        runner.stop()


def lanes():
    return canary_lanes({"gitlab_pools": POOLS, "cpu_lanes": True, "nodes": NODES,
                         "runtime_classes": ["nvidia"]})


def params(url, **extra):
    content = ci_yaml(canary_ci({"lanes": lanes(), "images": {"cuda": "cuda:12", "dri": "ubuntu"},
                                 "job_timeout": 60})["gitlab_jobs"], "generated")
    return dict(dict(url=url, api_token=TOKEN, project="gpuci/canary", ref="main", ci_content=content,
                     pending_timeout=3, run_timeout=20, poll_interval=1, read_pods=False, kubeconfig=None,
                     context=None), **extra)


def kwok_pods(project_id):
    """The cluster's answer while the l40s job runs: its pod on a simulated node, by the runner's annotation."""
    return [{"metadata": {"name": "runner-l40s-project-1-concurrent-0", "namespace": "gitlab-runner-jobs",
                          "annotations": {"job.runner.gitlab.com/id": "1"}},
             "spec": {"nodeName": "kwok-l40s-0"}, "status": {"phase": "Running"}}]


def run(p, check_mode=False, list_pods=None):
    said = []
    result = canary_gitlab_pipeline.run_module(p, said.append, check_mode, list_pods=list_pods)
    return result, said


def report(result):
    return proof_report({"lanes": lanes(), "nodes": NODES, "job_timeout": 20, "checked_at": "2026-01-01T00:00:00Z",
                         "now": "2026-01-01T00:05:00Z", "gitlab": result, "gitlab_job_timeout": 3,
                         "cluster": {"name": "unit", "simulated": True}, "namespace": "gpu-canary",
                         "generated_at": "2026-01-01T00:05:00Z"})


def test_pipeline_jobs_routed_by_tags_judged_per_lane(standin, runners):
    result, said = run(params(standin.url), list_pods=kwok_pods)
    assert "failed" not in result, result
    assert result["changed"] and result["commit"]["id"], "the first run commits .gitlab-ci.yml"
    assert result["pipeline"]["id"] == 1
    jobs = result["jobs"]
    assert jobs["gpu-canary-l40s"]["id"] == 1, "kwok_pods answers for job 1: .gitlab-ci.yml lists l40s first"
    # Routed by tags: each job went to the runner with its tags; none had the a100 pool's.
    assert jobs["gpu-canary-cpu"]["runner"]["description"] == "cpu"
    assert jobs["gpu-canary-l40s"]["runner"]["description"] == "l40s"
    assert (jobs["gpu-canary-a100-mig"]["status"], jobs["gpu-canary-a100-mig"]["gave_up"]) == ("pending", "pending")
    assert runners[0].taken == ["gpu-canary-cpu", NEGATIVE_CONTROL_JOB] and runners[1].taken == ["gpu-canary-l40s"]
    assert any("pending: " in line and "gpu-canary-a100-mig" in line for line in said), said

    document = report(result)
    by_name = dict((lane["name"], lane) for lane in document["lanes"])
    cpu = by_name["cpu"]
    assert (cpu["result"], cpu["proved_by"]) == ("passed", ["GitLab job"])
    assert cpu["evidence"] == ["gpu-canary: CPU job ran on runner-pod (Linux 6.1.0 x86_64)",
                               "gpu-canary: the checkout holds .gitlab-ci.yml"]
    (cpu_job,) = cpu["gitlab_jobs"]
    expected = (jobs["gpu-canary-cpu"]["id"], 1, "runner-fake-%d" % cpu_job["job_id"])
    assert (cpu_job["job_id"], cpu_job["pipeline_id"], cpu_job["pod"]) == expected
    assert cpu_job["job_url"].endswith("/gpuci/canary/-/jobs/%d" % cpu_job["job_id"])
    # The l40s job's pod landed on a simulated node: its failure is the simulation's, the lane scheduled-only.
    l40s = by_name["l40s-cuda-1gpu"]
    assert (l40s["result"], l40s["node"], l40s["node_simulated"]) == ("scheduled-only", "kwok-l40s-0", True)
    assert "the simulation's, not the lane's" in l40s["reason"] and "ended failed" in l40s["reason"]
    a100 = by_name["a100-cuda-mig-1g-10gb"]
    assert a100["result"] == "failed"
    assert "no runner with tags [gpu, a100] took job %d within 3s" % jobs["gpu-canary-a100-mig"]["id"] in a100["reason"]
    assert document["summary"] == {"proved": 0, "passed": 1, "scheduled-only": 1, "failed": 1}
    assert document["gitlab"]["pipeline_id"] == 1
    # The negative control ran on the cpu pool's runner and held; its node was not read (no pod listed).
    control = document["gitlab"]["negative_control"]
    assert (control["result"], control["runner"]["description"]) == ("holds", "cpu"), control
    assert document["gitlab"]["pipeline_outcome"] == (
        "%s: job gpu-canary-l40s ran on simulated (kwok) nodes, where no container runs; job gpu-canary-a100-mig "
        "got no runner" % result["pipeline"]["status"])
    assert [row["name"] for row in document["nodes"] if "l40s-cuda-1gpu" in row["landed"]] == ["kwok-l40s-0"]
    assert TOKEN not in json.dumps(document)


def test_rerun_makes_no_second_commit(standin, runners):
    first, _said = run(params(standin.url))
    commits = standin.commits(TOKEN)
    second, _said = run(params(standin.url))
    assert first["changed"] and not second["changed"]
    assert second["commit"] is None and second["pipeline"]["id"] == first["pipeline"]["id"] + 1
    assert standin.commits(TOKEN) == commits
    pipeline = first["pipeline"]
    assert first["summary"] == "Pipeline %s (%s): %s; committed %s." % (
        pipeline["id"], pipeline["web_url"], pipeline["status"], first["commit"]["id"])
    assert second["summary"].endswith("; the file was unchanged.")


def test_check_mode_commits_nothing_and_creates_no_pipeline(standin):
    commits = standin.commits(TOKEN)
    result, said = run(params(standin.url), check_mode=True)
    assert result["changed"] and result["pipeline"] is None and result["commit"] is None
    assert "generated" in result["diff"]["after"]
    assert standin.commits(TOKEN) == commits
    endpoints = [json.loads(line)["endpoint"] for line in standin.record_text().splitlines()]
    assert "/api/v4/projects/:id/repository/commits" not in endpoints
    assert "/api/v4/projects/:id/pipeline" not in endpoints
    assert said and "would be committed" in said[0]
    assert result["summary"] == "Check mode: .gitlab-ci.yml would be committed to gpuci/canary@main; no pipeline is created."


def test_the_token_appears_nowhere(standin, runners):
    result, said = run(params(standin.url))
    failed, failed_said = run(params(standin.url, project="nobody/nothing"))
    record = standin.record_text()
    assert "token_sha256" in record, "the record notes fingerprints"
    for text in (json.dumps(result), json.dumps(report(result)), record, "\n".join(said + failed_said),
                 json.dumps(failed)):
        assert TOKEN not in text and "MARK7f3a" not in text


def test_bad_token_names_the_token_variable(standin):
    result, _said = run(params(standin.url, api_token="not-a-glpat-token"))
    assert result["failed"]
    assert result["msg"].startswith("gpu_canary_gitlab_api_token: GitLab at %s refused the token (401" % standin.url)
    assert "not-a-glpat-token" not in result["msg"]


def test_unknown_project_names_the_project_variable(standin):
    result, _said = run(params(standin.url, project="nobody/nothing"))
    assert result["failed"] and result["msg"].startswith("gpu_canary_gitlab_project: ")
    assert "nobody/nothing" in result["msg"]


def test_a_ref_gitlab_refuses_names_the_ref_variable_and_commits_nothing(standin):
    # STAND-IN DIFFERENCE: it makes a missing branch on commit, so a name it refuses stands for a missing one
    # (GitLab answers 400 to a commit on a branch that does not exist, without start_branch).
    commits = standin.commits(TOKEN)
    result, _said = run(params(standin.url, ref="bad..ref"))
    assert result["failed"] and result["msg"].startswith("gpu_canary_gitlab_ref: "), result
    assert standin.commits(TOKEN) == commits


def test_unreachable_url_names_the_url_variable(monkeypatch):
    # A refused connection is one of GitLab's transient errors (a restarting pod): python-gitlab tries again,
    # MAX_RETRIES times with its backoff (recorded here instead of slept), then the URL is named.
    waited = []
    monkeypatch.setattr("time.sleep", waited.append)
    url = "http://127.0.0.1:%d" % free_port()
    result, _said = run(params(url))
    assert result["failed"] and result["msg"].startswith("gpu_canary_gitlab_url: GitLab cannot be reached at " + url)
    assert len(waited) == canary_gitlab_pipeline.MAX_RETRIES


class _Project:
    """A project whose user is a Reporter: GitLab's answer the stand-in (always Maintainer) cannot give."""
    attributes = {"id": 9, "path_with_namespace": "g/canary", "web_url": "u",
                  "permissions": {"project_access": {"access_level": 20}, "group_access": None}}

    class protectedbranches:  # noqa: N801 - python-gitlab's attribute name
        @staticmethod
        def get(ref):
            raise AssertionError("not reached: the access level already refuses")

    class commits:  # noqa: N801
        @staticmethod
        def create(data):
            raise AssertionError("a Reporter's run must commit nothing")


class _Client:
    class projects:  # noqa: N801
        @staticmethod
        def get(ident):
            return _Project()


def test_no_push_rights_is_refused_before_any_commit():
    result = canary_gitlab_pipeline.run_module(params("http://gitlab.invalid"), [].append, False, client=_Client(),
                                               list_pods=lambda project_id: [])
    assert result["failed"] and result["msg"].startswith("gpu_canary_gitlab_project: the user of "
                                                         "gpu_canary_gitlab_api_token has Reporter access (level 20)")


def test_report_validates_and_its_markdown_shows_each_gitlab_job(standin, runners):
    import jinja2
    import jsonschema
    from ansible.plugins.filter.core import regex_replace

    document = report(run(params(standin.url), list_pods=kwok_pods)[0])
    role = Path(__file__).resolve().parents[4] / "roles" / "gpu_canary"
    jsonschema.validate(document, json.loads((role / "files" / "proof-report.schema.json").read_text()))
    env = jinja2.Environment(trim_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["regex_replace"] = regex_replace
    text = env.from_string((role / "templates" / "proof-report.md.j2").read_text()).render(_gpu_canary_report=document)
    assert "| lanes | 0 proved, 1 passed, 1 scheduled-only, 1 failed |" in text
    assert "| pipeline | [1](%s/gpuci/canary/-/pipelines/1), " % standin.url in text
    rows = [line for line in text.splitlines() if line.startswith("| cpu |")]
    cpu_job = document["lanes"][-1]["gitlab_jobs"][0]
    assert rows and rows[0].endswith("| GitLab cpu | GitLab job %d of pipeline 1 (runner cpu, pod `runner-fake-%d` on `-`) |"
                                     % (cpu_job["job_id"], cpu_job["job_id"])), rows
    assert "| pipeline | [1](%s/gpuci/canary/-/pipelines/1), %s |" % (
        standin.url, document["gitlab"]["pipeline_outcome"]) in text
    assert "| negative control | holds: job " in text
    assert "gpu-canary: negative control holds: no /dev/nvidia*" in text
    assert "Runner: cpu (id 1000);" in text and "gpu-canary: CPU job ran on runner-pod (Linux 6.1.0 x86_64)" in text
    assert "node: `kwok-l40s-0` (simulated)." in text
    assert TOKEN not in text
