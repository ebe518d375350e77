# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The exact proof: a GPU lane is proved only by a job that saw what the lane promises, no more, no less.

Each trace below is judged twice, as the log of the lane's canary Job (the
ARC lanes and every lane without GitLab mode) and as the trace of the
pool's GitLab job: the class's product, as many GPUs as ``gpus`` (one MIG
device of the profile), on a node of the class; anything else is
``failed``, saying what the job saw and what the lane wanted. The H200 row
is the one docs/proof-h200.md shows a real H200 printing.
"""
import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.ci_snippets import NEGATIVE_CONTROL_JOB
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.exact_proof import Seen, Wanted, differences
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.lanes import canary_lanes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.verdict import canary_verdict

# docs/proof-h200.md: the row of GitLab job 1 and of the canary Job on real-0, an NVIDIA H200.
H200_ROW = "NVIDIA H200, 580.159.04, 143771 MiB"
L40S_ROW = "NVIDIA L40S, 550.54.15, 46068 MiB"
A100_ROW = "NVIDIA A100-SXM4-80GB, 550.54.15, 81920 MiB"
H100_ROW = "NVIDIA H100 80GB HBM3, 550.54.15, 81559 MiB"
A100_LINE = "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5a1c)"
MIG_10GB = "  MIG 1g.10gb     Device  0: (UUID: MIG-88d2)"
MIG_20GB = "  MIG 2g.20gb     Device  1: (UUID: MIG-91e0)"
NOT_A_GPU = "gpu-canary: negative control holds: no /dev/nvidia* or /dev/dri/renderD* device node, no nvidia-smi"

POOLS = [
    {"name": "l40s", "gpu_class": "l40s", "gpus": 1, "tags": ["l40s"]},
    {"name": "l40s-pair", "gpu_class": "l40s", "gpus": 2, "tags": ["l40s", "pair"]},
    {"name": "a100-mig", "gpu_class": "a100", "mig_profile": "1g.10gb", "tags": ["a100"]},
    {"name": "h100", "gpu_class": "h100", "gpus": 1, "tags": ["h100"]},
    {"name": "h200", "gpu_class": "h200", "gpus": 1, "tags": ["h200"]},
    {"name": "cpu", "tags": ["cpu"]},
]
POOL_LANES = {"l40s": "l40s-cuda-1gpu", "l40s-pair": "l40s-cuda-2gpu", "a100-mig": "a100-cuda-mig-1g-10gb",
              "h100": "h100-cuda-1gpu", "h200": "h200-cuda-1gpu"}


def gpu_node(name, product, allocatable):
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "nvidia.com/gpu.product": product}},
            "status": {"allocatable": allocatable}}


NODES = [
    gpu_node("real-l40s", "NVIDIA-L40S", {"nvidia.com/gpu": "4"}),
    gpu_node("real-a100", "NVIDIA-A100-SXM4-80GB", {"nvidia.com/gpu": "2", "nvidia.com/mig-1g.10gb": "7"}),
    gpu_node("real-h100", "NVIDIA-H100-80GB-HBM3", {"nvidia.com/gpu": "8"}),
    # docs/proof-h200.md's node: real-0 with the H200, labelled as GFD labels it.
    gpu_node("real-0", "NVIDIA-H200", {"nvidia.com/gpu": "1"}),
    {"metadata": {"name": "cpu-0", "labels": {"kubernetes.io/hostname": "cpu-0"}}, "status": {}},
]
HOME = {"l40s": "real-l40s", "l40s-pair": "real-l40s", "a100-mig": "real-a100", "h100": "real-h100", "h200": "real-0"}

# case -> (pool, node its pod ran on, output lines, result, what the reason says)
CASES = {
    "the H200 of docs/proof-h200.md": ("h200", "real-0", [H200_ROW], "proved", None),
    "an L40S on an L40S node": ("l40s", "real-l40s", [L40S_ROW], "proved", None),
    "an H100, whose name has spaces": ("h100", "real-h100", [H100_ROW], "proved", None),
    "two L40S on a two-GPU lane": ("l40s-pair", "real-l40s", [L40S_ROW, L40S_ROW], "proved", None),
    "the MIG device of the profile": ("a100-mig", "real-a100", [A100_LINE, MIG_10GB], "proved", None),
    "an A100 on an L40S lane": ("l40s", "real-l40s", [A100_ROW], "failed",
                                "GPU NVIDIA A100-SXM4-80GB is not the class's NVIDIA-L40S"),
    "an H200 on an H100 lane": ("h100", "real-h100", [H200_ROW], "failed",
                                "GPU NVIDIA H200 is not the class's NVIDIA-H100-80GB-HBM3"),
    "one GPU of two": ("l40s-pair", "real-l40s", [L40S_ROW], "failed", "1 GPU, not 2"),
    "two GPUs of one": ("l40s", "real-l40s", [L40S_ROW, L40S_ROW], "failed", "2 GPUs, not 1"),
    "a MIG device of another profile": ("a100-mig", "real-a100", [A100_LINE, MIG_20GB], "failed",
                                        "with MIG device 2g.20gb on node real-a100"),
    "another MIG device beside the profile's": ("a100-mig", "real-a100", [A100_LINE, MIG_10GB, MIG_20GB], "failed",
                                                "MIG devices 1g.10gb, 2g.20gb, not exactly one MIG device 1g.10gb"),
    "a MIG device of another GPU": ("a100-mig", "real-a100", ["GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-1)", MIG_10GB],
                                    "failed", "GPU NVIDIA H100 80GB HBM3 is not the class's NVIDIA-A100-SXM4-80GB"),
    "the right GPU on the wrong node": ("l40s", "real-a100", [L40S_ROW], "failed", "node real-a100 is not of class l40s"),
    "a node the canary did not read": ("l40s", "gpu-new-0", [L40S_ROW], "failed",
                                       "node gpu-new-0 was not among the nodes read, so its class is unknown"),
}


def lanes():
    return canary_lanes({"gitlab_pools": POOLS, "cpu_lanes": True, "nodes": NODES, "runtime_classes": ["nvidia"]})


def lane_of(pool):
    return next(lane for lane in lanes() if lane["name"] == POOL_LANES[pool])


def by_canary_job(pool, node, lines):
    """The lane's canary Job ran on ``node`` and its log is ``lines``: the lane's result."""
    lane = lane_of(pool)
    job_name = lane["job_name"]
    job = {"metadata": {"name": job_name}, "status": {"startTime": "t0", "succeeded": 1, "conditions": [
        {"type": "Complete", "status": "True", "lastTransitionTime": "t1"}]}}
    pod = {"metadata": {"name": job_name + "-x", "ownerReferences": [{"kind": "Job", "name": job_name}]},
           "spec": {"nodeName": node}, "status": {"phase": "Succeeded", "containerStatuses": [
               {"name": "canary", "state": {"terminated": {"exitCode": 0}}}]}}
    verdict = canary_verdict({"lanes": [lane], "jobs": [job], "pods": [pod], "logs": [{"pod": pod, "log_lines": lines}],
                              "nodes": NODES, "job_timeout": 60, "checked_at": "t0", "now": "t2"})
    (result,) = verdict["lanes"]
    return result


def gitlab_job(job_id, node, trace):
    return {"id": job_id, "status": "success", "web_url": "http://gitlab/g/c/-/jobs/%d" % job_id,
            "runner": {"id": job_id, "description": "r"}, "started": "t0", "finished": "t1", "gave_up": "",
            "pod": {"name": "runner-%d" % job_id, "namespace": "jobs", "node": node, "phase": "Succeeded"},
            "trace": list(trace)}


def by_gitlab_job(pool, node, lines):
    """The pool's GitLab job ran on ``node`` (None: its pod was never seen) and its trace is ``lines``."""
    jobs = {"gpu-canary-" + pool: gitlab_job(1, node, ["$ nvidia-smi ...", *lines]),
            "gpu-canary-cpu": gitlab_job(2, "cpu-0", ["gpu-canary: CPU job ran on runner-2 (Linux)",
                                                      "gpu-canary: the checkout holds .gitlab-ci.yml"]),
            NEGATIVE_CONTROL_JOB: gitlab_job(3, "cpu-0", ["gpu-canary: negative control on runner-3, a pod", NOT_A_GPU])}
    gitlab = {"pipeline": {"id": 7, "web_url": "http://gitlab/g/c/-/pipelines/7", "status": "success"}, "jobs": jobs}
    chosen = [lane for lane in lanes() if lane["name"] in (POOL_LANES[pool], "cpu")]
    chosen[0] = dict(chosen[0], gitlab_pools=[p for p in chosen[0]["gitlab_pools"] if p["name"] == pool])
    verdict = canary_verdict({"lanes": chosen, "nodes": NODES, "job_timeout": 60, "checked_at": "t0", "now": "t2",
                              "gitlab": gitlab, "gitlab_job_timeout": 30})
    gpu_lane, cpu_lane = verdict["lanes"]
    return gpu_lane, cpu_lane


@pytest.mark.parametrize("case", list(CASES))
def test_the_canary_job_proves_only_what_the_lane_promises(case):
    pool, node, lines, expected, says = CASES[case]
    result = by_canary_job(pool, node, lines)
    assert result["result"] == expected, result["reason"]
    if says:
        assert result["reason"].startswith("not what the lane promises: the job saw ") or "no GPU evidence" in \
            result["reason"], result["reason"]
        assert says in result["reason"], result["reason"]
        assert "; the lane wants " in result["reason"]
        assert result["evidence"], "a failed container on a real node is quoted"


@pytest.mark.parametrize("case", list(CASES))
def test_the_gitlab_job_proves_only_what_the_lane_promises(case):
    pool, node, lines, expected, says = CASES[case]
    lane, _cpu = by_gitlab_job(pool, node, lines)
    (job,) = lane["gitlab_jobs"]
    assert (job["result"], lane["result"]) == (expected, expected), job["reason"]
    if says:
        assert job["reason"].startswith("job 1 succeeded but ")
        assert says in job["reason"] and "; the lane wants " in job["reason"], job["reason"]
        assert says in lane["reason"], "the lane's reason quotes the job's"


def test_a_failed_proof_says_what_the_job_saw_and_what_the_lane_wanted():
    result = by_canary_job("l40s", "real-l40s", [A100_ROW])
    assert result["reason"] == (
        "not what the lane promises: the job saw 1 GPU (NVIDIA A100-SXM4-80GB) on node real-l40s "
        "(nvidia.com/gpu.product=NVIDIA-L40S); the lane wants 1 GPU of NVIDIA-L40S (class l40s) on a node with "
        "nvidia.com/gpu.product=NVIDIA-L40S (GPU NVIDIA A100-SXM4-80GB is not the class's NVIDIA-L40S)")
    assert result["evidence"] == [A100_ROW]
    wrong_node = by_canary_job("l40s-pair", "real-a100", [L40S_ROW])
    assert wrong_node["reason"] == (
        "not what the lane promises: the job saw 1 GPU (NVIDIA L40S) on node real-a100 "
        "(nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB); the lane wants 2 GPUs of NVIDIA-L40S (class l40s) on a node "
        "with nvidia.com/gpu.product=NVIDIA-L40S (1 GPU, not 2; node real-a100 is not of class l40s)")


def test_the_h200_proof_of_docs_proof_h200_still_proves_by_both_paths():
    job = by_canary_job("h200", "real-0", [H200_ROW])
    assert (job["result"], job["reason"], job["evidence"]) == ("proved", "nvidia-smi printed a GPU row", [H200_ROW])
    lane, _cpu = by_gitlab_job("h200", "real-0", [H200_ROW])
    (entry,) = lane["gitlab_jobs"]
    assert (entry["result"], entry["reason"]) == ("proved", "nvidia-smi printed a GPU row (GitLab job 1)")
    assert lane["result"] == "proved", lane["reason"]


def test_a_gitlab_job_whose_pod_was_never_seen_proves_nothing():
    """The node of a job pod is read only while it runs (the runner deletes it): unseen, its class is unknown."""
    lane, _cpu = by_gitlab_job("l40s", None, [L40S_ROW])
    (job,) = lane["gitlab_jobs"]
    assert job["result"] == "failed"
    assert "the job saw 1 GPU (NVIDIA L40S) on no node (its pod was not seen)" in job["reason"]
    assert job["reason"].endswith("(the node is unknown)")


def test_the_cpu_lane_still_passes_wherever_its_job_ran():
    """A CPU pool's lane promises no device and no node: its job passes on any node (cpu-0 has no GPU label)."""
    _gpu, cpu = by_gitlab_job("l40s", "real-l40s", [L40S_ROW])
    assert (cpu["result"], cpu["node"]) == ("passed", "cpu-0"), cpu["reason"]
    wanted = Wanted.of_lane(next(lane for lane in lanes() if lane["name"] == "cpu"))
    assert (wanted.product, wanted.devices, wanted.node_selector) == (None, None, {})
    assert differences(wanted, Seen((), (), None, None)) == []


def test_a_dri_lane_is_held_to_its_node_only():
    dri = canary_lanes({"arc_scale_sets": [{"name": "vulkan", "gpu_class": "dri", "gpu_access": "dri"}]})[0]
    wanted = Wanted.of_lane(dri)
    assert (wanted.product, wanted.devices, wanted.node_selector) == (None, None, {"gpuci.runners/dri": "true"})
    assert differences(wanted, Seen((), (), "dri-0", {"gpuci.runners/dri": "true"})) == []
    assert differences(wanted, Seen((), (), "cpu-0", {})) == ["node cpu-0 is not of class dri"]


def test_a_class_of_the_inventory_is_held_to_its_own_product():
    classes = {"rtx": {"product": "NVIDIA-GeForce-RTX-4090", "gpu_access": ["cuda"]}}
    (lane,) = canary_lanes({"gitlab_pools": [{"name": "rtx", "gpu_class": "rtx"}]}, classes)
    wanted = Wanted.of_lane(lane)
    labels = {"nvidia.com/gpu.product": "NVIDIA-GeForce-RTX-4090"}
    assert differences(wanted, Seen(("NVIDIA GeForce RTX 4090",), (), "n", labels)) == []
    assert differences(wanted, Seen(("NVIDIA GeForce RTX 4080",), (), "n", labels)) == [
        "GPU NVIDIA GeForce RTX 4080 is not the class's NVIDIA-GeForce-RTX-4090"]
