# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GitLab negative control: a job without a GPU request, in the GPU jobs' image, must see no GPU.

A GPU lane in GitLab mode is proved only when its own job's trace has the
GPU's row and the negative control holds; the pipeline's outcome names the
jobs that made it fail and says when that was the simulation.
"""
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.ci_snippets import (
    NEGATIVE_CONTROL_JOB,
    canary_ci,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.lanes import canary_lanes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.proof_report import proof_report

GPU_POOL = {"name": "h200", "gpu_class": "h200", "gpus": 1, "tags": ["gpu", "h200"]}
CPU_POOL = {"name": "cpu", "tags": ["cpu"], "image": "debian:bookworm"}
NODES = [{"metadata": {"name": "real-0", "labels": {"nvidia.com/gpu.product": "NVIDIA-H200"}},
          "status": {"allocatable": {"nvidia.com/gpu": "1"}}},
         {"metadata": {"name": "kwok-0", "annotations": {"kwok.x-k8s.io/node": "fake"},
                       "labels": {"nvidia.com/gpu.product": "NVIDIA-H200"}},
          "status": {"allocatable": {"nvidia.com/gpu": "8"}}}]
GPU_TRACE = ["Running on runner-h200-1 via manager...",
             "$ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee /tmp/gpu-canary.txt",
             "NVIDIA H200, 580.159.04, 143771 MiB"]
HOLDS_TRACE = ["gpu-canary: negative control on runner-cpu-2, a pod without a GPU request",
               "gpu-canary: negative control holds: no /dev/nvidia* or /dev/dri/renderD* device node, no nvidia-smi"]
BROKEN_TRACE = ["gpu-canary: negative control on runner-cpu-2, a pod without a GPU request",
                "gpu-canary: negative control broken: /dev/nvidia0 is visible"]


def lanes(pools=(GPU_POOL, CPU_POOL)):
    return canary_lanes({"gitlab_pools": list(pools), "cpu_lanes": True, "nodes": NODES, "runtime_classes": ["nvidia"]})


def gitlab_job(job_id, node, status, trace, name):
    return {"id": job_id, "name": name, "status": status, "web_url": "http://gitlab/g/c/-/jobs/%d" % job_id,
            "runner": {"id": job_id, "description": name}, "started": "t0", "finished": "t1", "gave_up": "",
            "pod": {"name": "runner-%d" % job_id, "namespace": "jobs", "node": node, "phase": "Succeeded"},
            "trace": trace}


def report(control=None, gpu_node="real-0", gpu_status="success", pools=(GPU_POOL, CPU_POOL), pipeline_status=None):
    jobs = {"gpu-canary-h200": gitlab_job(1, gpu_node, gpu_status, GPU_TRACE, "gpu-canary-h200"),
            "gpu-canary-cpu": gitlab_job(2, "real-0", "success", [
                "gpu-canary: CPU job ran on runner-2 (Linux 6.1 x86_64)",
                "gpu-canary: the checkout holds .gitlab-ci.yml"], "gpu-canary-cpu")}
    if control is not None:
        jobs[NEGATIVE_CONTROL_JOB] = control
    statuses = [job["status"] for job in jobs.values()]
    gitlab = {"project": {"id": 1, "path": "g/c"}, "ref": "main", "file": ".gitlab-ci.yml",
              "pipeline": {"id": 7, "web_url": "http://gitlab/g/c/-/pipelines/7",
                           "status": pipeline_status or ("success" if set(statuses) == {"success"} else "failed")},
              "jobs": jobs}
    return proof_report({"lanes": lanes(pools), "nodes": NODES, "job_timeout": 60, "checked_at": "2026-01-01T00:00:00Z",
                         "now": "2026-01-01T00:05:00Z", "gitlab": gitlab, "gitlab_job_timeout": 30,
                         "cluster": {"name": "unit"}, "namespace": "gpu-canary",
                         "generated_at": "2026-01-01T00:05:00Z"})


def gpu_lane(document):
    return next(lane for lane in document["lanes"] if lane["gpu_access"] == "cuda")


def test_the_pipeline_has_the_control_job_on_the_cpu_pool_with_the_gpu_jobs_image():
    jobs = canary_ci({"lanes": lanes(), "images": {"cuda": "cuda:12"}, "job_timeout": 60})["gitlab_jobs"]
    control = jobs[NEGATIVE_CONTROL_JOB]
    assert control["tags"] == ["cpu"] and control["image"] == jobs["gpu-canary-h200"]["image"] == "cuda:12"
    assert any("command -v nvidia-smi" in line for line in control["script"])


def test_no_control_job_without_a_gpu_pool_or_without_a_pool_that_has_none():
    only_cpu = canary_ci({"lanes": lanes([CPU_POOL]), "images": {}, "job_timeout": 60})["gitlab_jobs"]
    only_gpu = canary_ci({"lanes": lanes([GPU_POOL]), "images": {"cuda": "cuda:12"}, "job_timeout": 60})["gitlab_jobs"]
    assert NEGATIVE_CONTROL_JOB not in only_cpu and NEGATIVE_CONTROL_JOB not in only_gpu


def test_a_gpu_row_and_a_control_that_holds_on_the_same_node_prove_the_lane():
    document = report(gitlab_job(3, "real-0", "success", HOLDS_TRACE, NEGATIVE_CONTROL_JOB))
    control = document["gitlab"]["negative_control"]
    assert (control["result"], control["holds"], control["pool"], control["node"]) == ("holds", True, "cpu", "real-0")
    assert control["evidence"] == HOLDS_TRACE
    lane = gpu_lane(document)
    assert lane["result"] == "proved", lane["reason"]
    assert "the GPU job's node too" in lane["reason"]
    assert document["gitlab"]["pipeline_outcome"] == "success"


def test_a_control_that_saw_a_gpu_fails_the_lane_whatever_the_gpu_job_showed():
    document = report(gitlab_job(3, "real-0", "failed", BROKEN_TRACE, NEGATIVE_CONTROL_JOB))
    control = document["gitlab"]["negative_control"]
    assert (control["result"], control["holds"]) == ("broken", False)
    lane = gpu_lane(document)
    assert lane["result"] == "failed"
    assert "negative control: job 3 without a GPU request saw a GPU: " \
           "gpu-canary: negative control broken: /dev/nvidia0 is visible" in lane["reason"]
    assert "did not succeed on a real node" in document["gitlab"]["pipeline_outcome"]


def test_a_control_whose_trace_lacks_its_line_does_not_hold():
    document = report(gitlab_job(3, "real-0", "success", HOLDS_TRACE[:1], NEGATIVE_CONTROL_JOB))
    assert document["gitlab"]["negative_control"]["result"] == "failed"
    assert gpu_lane(document)["result"] == "failed"


def test_without_a_pool_free_of_gpus_no_lane_is_proved_and_the_report_says_what_to_add():
    document = report(pools=[GPU_POOL])
    control = document["gitlab"]["negative_control"]
    assert (control["result"], control["pool"]) == ("missing", None)
    lane = gpu_lane(document)
    assert lane["result"] == "failed"
    assert "add such a pool (gitlab_runner_pools)" in lane["reason"]


def test_a_control_on_a_simulated_node_proves_nothing():
    document = report(gitlab_job(3, "kwok-0", "success", HOLDS_TRACE, NEGATIVE_CONTROL_JOB))
    assert document["gitlab"]["negative_control"]["result"] == "scheduled-only"
    assert gpu_lane(document)["result"] == "scheduled-only"


def test_a_pipeline_without_the_control_job_fails_the_gpu_lane():
    document = report(None)
    assert document["gitlab"]["negative_control"]["result"] == "missing"
    assert gpu_lane(document)["result"] == "failed"


def test_the_cpu_lane_has_no_negative_control_part():
    document = report(gitlab_job(3, "real-0", "failed", BROKEN_TRACE, NEGATIVE_CONTROL_JOB))
    cpu = next(lane for lane in document["lanes"] if lane["gpu_access"] == "none")
    assert cpu["result"] == "passed" and "negative control" not in cpu["reason"]


def test_a_pipeline_failed_by_simulated_gpu_jobs_alone_reads_as_the_simulation():
    document = report(gitlab_job(3, "real-0", "success", HOLDS_TRACE, NEGATIVE_CONTROL_JOB), gpu_node="kwok-0",
                      gpu_status="failed")
    outcome = document["gitlab"]["pipeline_outcome"]
    assert outcome.startswith("failed, only because job gpu-canary-h200 ran on simulated (kwok) nodes")
    assert "scheduled-only (not proved, not passed)" in outcome
    assert gpu_lane(document)["result"] == "scheduled-only"
