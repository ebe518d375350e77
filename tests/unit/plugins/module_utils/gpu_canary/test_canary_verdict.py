# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""canary_verdict: recorded cluster answers -> the proof report's lanes and node table.

The cluster answers here are shaped as kubernetes.core.k8s_info and k8s_log
return them (Job, Pod and Node objects; k8s_log results of a loop with
loop_var pod), and the checks are the canary's own (module_utils/gpu_canary/checks.py),
which the verdict uses unless given others.
"""
import copy
import json
import pathlib

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.checks import CHECKS
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.checks import JOB_PREFIX as PREFIX
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.lanes import canary_lanes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.verdict import OUTPUT_LINES, canary_verdict, node_table
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.proof_report import SCHEMA_VERSION
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

REPO = pathlib.Path(__file__).resolve().parents[5]
ROLE = REPO / "roles" / "gpu_canary"
NAMESPACE = "gpu-canary"
CHECKED_AT = "2026-03-02T10:00:00Z"
NOW = "2026-03-02T10:11:00Z"
LABELS = {"app.kubernetes.io/part-of": "gpuci-runners", "app.kubernetes.io/managed-by": "gpuci.runners",
          "app.kubernetes.io/component": "gpu-canary"}

GPU_ROW = "NVIDIA L40S, 550.54.15, 46068 MiB"
NOT_FOUND = "sh: 1: nvidia-smi: not found"


def node(name, labels=None, allocatable=None, kwok=False, taints=None):
    """A Node as the API server returns it; kwok nodes carry kwok's annotation and our label."""
    labels = dict({"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"},
                  **(labels or {}))
    annotations = {"node.alpha.kubernetes.io/ttl": "0"}
    if kwok:
        labels.update({"type": "kwok", "gpuci.runners/simulated": "true"})
        annotations["kwok.x-k8s.io/node"] = "fake"
    resources = dict({"cpu": "32", "memory": "128Gi", "pods": "110"}, **(allocatable or {}))
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "uid": "uid-" + name, "resourceVersion": "812", "creationTimestamp": CHECKED_AT,
                     "labels": labels, "annotations": annotations},
        "spec": {"taints": taints or []},
        "status": {"capacity": resources, "allocatable": resources,
                   "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
                   "nodeInfo": {"kubeletVersion": "v1.34.4", "containerRuntimeVersion": "containerd://2.1.4"}},
    }


GPU_TAINT = [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
NODES = [
    node("gpu-l40s-0", {"nvidia.com/gpu.product": "NVIDIA-L40S"}, {"nvidia.com/gpu": "4"}, kwok=True, taints=GPU_TAINT),
    node("real-l40s", {"nvidia.com/gpu.product": "NVIDIA-L40S"}, {"nvidia.com/gpu": "1"}, taints=GPU_TAINT),
    node("real-a100", {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
         {"nvidia.com/gpu": "2", "nvidia.com/mig-1g.10gb": "7"}, taints=GPU_TAINT),
    node("real-dri", {"gpuci.runners/dri": "true"}),
    # The testbed's real node: no GPU, so no lane's selector matches it.
    node("real-0", {"gpuci.runners/real-node": "true"},
         taints=[{"key": "gpuci.runners/real-node", "value": "true", "effect": "NoSchedule"}]),
    node("cpu-0", kwok=True),
]
POOLS = [
    {"name": "l40s", "gpu_class": "l40s", "gpus": 1, "tags": ["gpu", "l40s"], "token": "glrt-secret"},
    {"name": "a100-mig", "gpu_class": "a100", "mig_profile": "1g.10gb", "tags": ["a100"]},
    {"name": "h100", "gpu_class": "h100", "tags": ["h100"]},
]
SCALE_SETS = [{"name": "arc-vulkan", "gpu_class": "dri", "gpu_access": "dri"}]


def lanes_by_name(nodes=None):
    lanes = canary_lanes({"gitlab_pools": POOLS, "arc_scale_sets": SCALE_SETS,
                          "nodes": NODES if nodes is None else nodes, "runtime_classes": ["nvidia"]})
    return {lane["name"]: lane for lane in lanes}


def job(name, outcome):
    """A canary Job (backoffLimit 0) that succeeded, failed or is still running."""
    status = {"startTime": "2026-03-02T10:00:05Z", "active": 1, "ready": 0, "terminating": 0,
              "uncountedTerminatedPods": {}}
    if outcome == "succeeded":
        status = dict(status, active=0, succeeded=1, completionTime="2026-03-02T10:00:41Z", conditions=[
            {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": "2026-03-02T10:00:40Z",
             "lastProbeTime": "2026-03-02T10:00:40Z", "reason": "CompletionsReached",
             "message": "Reached expected number of succeeded pods"},
            {"type": "Complete", "status": "True", "lastTransitionTime": "2026-03-02T10:00:41Z",
             "lastProbeTime": "2026-03-02T10:00:41Z", "reason": "CompletionsReached",
             "message": "Reached expected number of succeeded pods"}])
    elif outcome == "failed":
        status = dict(status, active=0, failed=1, conditions=[
            {"type": "FailureTarget", "status": "True", "lastTransitionTime": "2026-03-02T10:00:30Z",
             "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"},
            {"type": "Failed", "status": "True", "lastTransitionTime": "2026-03-02T10:00:31Z",
             "reason": "BackoffLimitExceeded", "message": "Job has reached the specified backoff limit"}])
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": name, "namespace": NAMESPACE, "uid": "uid-" + name, "labels": LABELS},
        "spec": {"backoffLimit": 0, "activeDeadlineSeconds": 660, "ttlSecondsAfterFinished": 600, "completions": 1},
        "status": status,
    }


def running():
    return {"running": {"startedAt": "2026-03-02T10:00:09Z"}}


def terminated(code, message=None):
    state = {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
             "startedAt": "2026-03-02T10:00:09Z", "finishedAt": "2026-03-02T10:00:29Z",
             "containerID": "containerd://0123"}
    if message is not None:
        state["message"] = message
    return {"terminated": state}


def waiting(reason, message=""):
    return {"waiting": {"reason": reason, "message": message}}


def pod(job_name, node_name, phase, state=None, unschedulable=""):
    """The Job's pod, as k8s_info returns it."""
    if node_name:
        conditions = [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2026-03-02T10:00:06Z"}]
    else:
        conditions = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                       "lastTransitionTime": "2026-03-02T10:00:06Z", "message": unschedulable}]
    spec = {"containers": [{"name": "canary", "image": "nvidia/cuda:12.4.1-base-ubuntu22.04"}], "restartPolicy": "Never"}
    if node_name:
        spec["nodeName"] = node_name
    status = {"phase": phase, "conditions": conditions, "qosClass": "BestEffort"}
    if state is not None:
        status["containerStatuses"] = [{"name": "canary", "image": "nvidia/cuda:12.4.1-base-ubuntu22.04",
                                        "ready": False, "restartCount": 0, "started": False, "state": state}]
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": job_name + "-x7k2p", "namespace": NAMESPACE, "labels": dict(LABELS, **{"job-name": job_name}),
                     "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": job_name,
                                          "uid": "uid-" + job_name, "controller": True, "blockOwnerDeletion": True}]},
        "spec": spec,
        "status": status,
    }


def log_read(pod_object, text):
    """A k8s_log result of the role's loop (loop_var pod); k8s_log splits the log at every newline."""
    return {"pod": pod_object, "changed": False, "failed": False, "log": text, "log_lines": text.split("\n"),
            "ansible_loop_var": "pod"}


def log_failed(pod_object, message):
    # failed_when: false keeps the play going; the module's message stays.
    return {"pod": pod_object, "changed": False, "failed": False, "msg": message, "ansible_loop_var": "pod"}


def verdict(lanes, jobs=(), pods=(), logs=(), nodes=None, **extra):
    nodes = NODES if nodes is None else nodes
    spec = {"lanes": lanes, "jobs": jobs, "pods": pods, "logs": logs, "nodes": nodes, "job_timeout": 600,
            "checked_at": CHECKED_AT, "now": NOW}
    spec.update(extra)
    return canary_verdict(spec)


def one_lane(base, case, node_name, outcome, phase, state, log=None, unschedulable=""):
    """Cluster answers for one lane (named `case`) whose pod landed on `node_name`."""
    lane = dict(lanes_by_name()[base], name=case, job_name=PREFIX + case)
    name = PREFIX + case
    the_pod = pod(name, node_name, phase, state, unschedulable)
    logs = []
    if isinstance(log, str):
        logs = [log_read(the_pod, log)]
    elif isinstance(log, Exception):
        logs = [log_failed(the_pod, str(log))]
    result = verdict([lane], [job(name, outcome)], [the_pod], logs)
    (lane_result,) = result["lanes"]
    return lane_result, result


# -- every branch, in the order of trust ------------------------------------------------------------------------

def test_node_check_failed_means_no_job_and_failed():
    lane = lanes_by_name()["h100-cuda-1gpu"]
    (result,) = verdict([lane])["lanes"]
    assert (result["result"], result["job"], result["node"]) == ("failed", None, None)
    assert result["reason"] == ("no schedulable node: no node matches the selector "
                                "nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3")
    assert (result["started_at"], result["finished_at"]) == (CHECKED_AT, NOW)
    assert result["evidence"] == []


def test_job_without_pod_says_why_from_its_conditions():
    lane = lanes_by_name()["l40s-cuda-1gpu"]
    stuck = job(PREFIX + lane["name"], "running")
    stuck["status"]["conditions"] = [{"type": "Failed", "status": "False", "message": ""},
                                     {"type": "FailureTarget", "status": "False",
                                      "message": 'pods "gpu-canary-l40s-cuda-1gpu-" is forbidden: exceeded quota'}]
    (result,) = verdict([lane], [stuck])["lanes"]
    assert result["result"] == "failed"
    assert result["reason"] == 'canary Job made no pod: pods "gpu-canary-l40s-cuda-1gpu-" is forbidden: exceeded quota'
    (result,) = verdict([lane])["lanes"]
    assert result["reason"] == "canary Job made no pod: none was created"
    assert result["job"] == "gpu-canary-l40s-cuda-1gpu"  # its node checks passed, so a Job was started


def test_unscheduled_pod_quotes_the_scheduler():
    message = ("0/6 nodes are available: 1 Insufficient nvidia.com/gpu, 5 node(s) didn't match Pod's node "
               "affinity/selector. preemption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling.")
    result, r = one_lane("l40s-cuda-1gpu", "unscheduled", None, "running", "Pending", None, unschedulable=message)
    assert (result["result"], result["node"], result["node_simulated"]) == ("failed", None, False)
    assert result["reason"] == "no schedulable node: " + message
    assert result["finished_at"] == NOW


def test_simulated_node_is_scheduled_only_whatever_its_pod_says():
    # kwok marks the pod Succeeded; even a made-up log line showing a GPU is no proof there.
    result, report = one_lane("l40s-cuda-1gpu", "kwok", "gpu-l40s-0", "succeeded", "Succeeded", terminated(0),
                              log=GPU_ROW + "\n")
    assert (result["result"], result["reason"]) == ("scheduled-only", "simulated node (kwok): containers do not run")
    assert (result["node"], result["node_simulated"]) == ("gpu-l40s-0", True)
    assert result["evidence"] == [GPU_ROW]  # quoted, never proof
    assert report["simulated_nodes"] == ["gpu-l40s-0"]


def test_simulated_node_wins_over_a_failed_container():
    result, r = one_lane("l40s-cuda-1gpu", "kwok-failed", "gpu-l40s-0", "failed", "Failed", terminated(127),
                         log=NOT_FOUND + "\n")
    assert result["result"] == "scheduled-only"
    assert result["evidence"] == []  # no output is quoted from a node where nothing ran


# A kind worker whose GPUs are advertised by a status patch (molecule/kind, GPUCI_KIND_SIMULATE).
SIMULATED_GPU_NODE = node("kind-worker", {"nvidia.com/gpu.product": "NVIDIA-L40S", "gpuci.runners/simulated-gpu": "true"},
                          {"nvidia.com/gpu": "2"})


def simulated_gpu_lane(outcome, phase, state, log):
    nodes = [SIMULATED_GPU_NODE]
    lane = dict(lanes_by_name(nodes)["l40s-cuda-1gpu"])
    name = PREFIX + lane["name"]
    the_pod = pod(name, "kind-worker", phase, state)
    report = verdict([lane], [job(name, outcome)], [the_pod], [log_read(the_pod, log)], nodes=nodes)
    return report["lanes"][0], report


def test_real_node_with_simulated_gpus_ran_the_container_but_proves_nothing():
    result, report = simulated_gpu_lane("failed", "Failed", terminated(127), NOT_FOUND + "\n")
    assert result["result"] == "scheduled-only"
    assert result["reason"] == ("real node with simulated GPUs (label gpuci.runners/simulated-gpu=true): "
                                "the container ran and exited with code 127; no GPU there to prove")
    assert (result["node_simulated"], result["node_gpus_simulated"]) == (False, True)
    assert result["evidence"] == [NOT_FOUND]  # the container really ran: its own words
    (row,) = report["nodes"]
    assert (row["name"], row["simulated"], row["gpus_simulated"]) == ("kind-worker", False, True)
    assert row["known_by"] == ("real (no annotation kwok.x-k8s.io/node), GPUs simulated: "
                               "label gpuci.runners/simulated-gpu=true")
    assert report["summary"] == {"proved": 0, "scheduled-only": 1, "failed": 0}


def test_simulated_gpus_are_no_proof_even_when_the_log_shows_one():
    result, report = simulated_gpu_lane("succeeded", "Succeeded", terminated(0), GPU_ROW + "\n")
    assert result["result"] == "scheduled-only"
    assert "the container ran and succeeded" in result["reason"]


def test_simulated_gpus_do_not_excuse_a_container_that_never_finished():
    result, report = simulated_gpu_lane("running", "Pending", waiting("ErrImageNeverPull"), "")
    assert result["result"] == "failed"
    assert "did not finish" in result["reason"]


def test_nodes_without_the_label_have_real_gpus():
    table = verdict(list(lanes_by_name().values()))["nodes"]
    assert not any(row["gpus_simulated"] for row in table)


def test_unfinished_job_names_the_container_waiting_reason():
    result, r = one_lane("l40s-cuda-1gpu", "timeout", "real-l40s", "running", "Pending",
                         waiting("ImagePullBackOff", 'Back-off pulling image "nvidia/cuda:12.4.1-base-ubuntu22.04"'))
    assert result["result"] == "failed"
    assert result["reason"] == "canary Job did not finish within 600s (container: ImagePullBackOff)"
    assert (result["started_at"], result["finished_at"]) == ("2026-03-02T10:00:05Z", NOW)
    assert result["evidence"] == []


def event(pod_name, reason, message, last, kind="Pod", type_="Warning", count=1):
    """An Event as k8s_info returns it."""
    return {"apiVersion": "v1", "kind": "Event", "type": type_, "reason": reason, "message": message,
            "count": count, "lastTimestamp": last, "metadata": {"name": pod_name + ".1", "namespace": NAMESPACE},
            "involvedObject": {"kind": kind, "name": pod_name, "namespace": NAMESPACE}}


def test_unfinished_job_quotes_the_pods_latest_warning():
    lane = lanes_by_name()["l40s-cuda-1gpu"]
    name = PREFIX + lane["name"]
    the_pod = pod(name, "real-l40s", "Pending", waiting("ContainerCreating"))
    pod_name = the_pod["metadata"]["name"]
    events = [
        event(pod_name, "FailedCreatePodSandBox", "first try", "2026-03-02T10:00:10Z"),
        event(pod_name, "FailedCreatePodSandBox",
              'Failed to create pod sandbox: unable to get OCI runtime:\n no runtime for "nvidia" is configured',
              "2026-03-02T10:05:10Z", count=20),
        event("someone-else", "BackOff", "not this pod", "2026-03-02T10:09:00Z"),
        event(pod_name, "Scheduled", "a Normal event is no warning", "2026-03-02T10:09:30Z", type_="Normal"),
    ]
    (result,) = verdict([lane], [job(name, "running")], [the_pod], events=events)["lanes"]
    assert result["result"] == "failed"
    assert result["reason"] == (
        "canary Job did not finish within 600s (container: ContainerCreating; last warning FailedCreatePodSandBox: "
        'Failed to create pod sandbox: unable to get OCI runtime: no runtime for "nvidia" is configured)')


def test_unfinished_running_container_quotes_its_output_so_far():
    result, r = one_lane("l40s-cuda-1gpu", "hung", "real-l40s", "running", "Running", running(),
                         log="waiting for the GPU\n")
    assert result["reason"] == "canary Job did not finish within 600s (container: Running)"
    assert result["evidence"] == ["waiting for the GPU"]


def test_failed_container_on_a_real_node_quotes_its_own_output():
    result, r = one_lane("l40s-cuda-1gpu", "exit", "real-l40s", "failed", "Failed", terminated(127),
                         log=NOT_FOUND + "\n")
    assert (result["result"], result["reason"]) == ("failed", "canary checks failed (exit code 127)")
    assert result["evidence"] == [NOT_FOUND]
    assert result["finished_at"] == "2026-03-02T10:00:31Z"  # the Failed condition's time


def test_failed_container_output_is_bounded_to_its_last_lines_and_matching_ones():
    lines = ["GPU 0: NVIDIA L40S (UUID: GPU-1)"] + ["apt noise %d" % n for n in range(50)] + [NOT_FOUND]
    result, r = one_lane("l40s-cuda-1gpu", "long", "real-l40s", "failed", "Failed", terminated(127),
                         log="\n".join(lines) + "\n")
    assert result["evidence"] == [lines[0]] + lines[-OUTPUT_LINES:]
    assert len(result["evidence"]) == OUTPUT_LINES + 1


def test_failed_container_without_a_readable_log_quotes_its_termination_message():
    result, r = one_lane("l40s-cuda-1gpu", "no-log-exit", "real-l40s", "failed", "Failed",
                         terminated(127, NOT_FOUND + "\n"), log=RuntimeError("container not found"))
    assert result["reason"] == "canary checks failed (exit code 127)"
    assert result["evidence"] == [NOT_FOUND]


def test_failed_job_without_container_status_has_exit_code_none():
    result, r = one_lane("l40s-cuda-1gpu", "deadline", "real-l40s", "failed", "Failed", None)
    assert result["reason"] == "canary checks failed (exit code none)"
    assert result["evidence"] == []


ADMISSION_MESSAGE = "Allocate failed due to cannot allocate unregistered device nvidia.com/gpu, which is unexpected"


def refused(job_name, node_name, reason="UnexpectedAdmissionError", message=ADMISSION_MESSAGE):
    """A pod the kubelet refused at admission: Failed with its reason and message, and no container status."""
    the_pod = pod(job_name, node_name, "Failed", None)
    the_pod["status"].update(reason=reason, message=message, startTime="2026-03-02T10:00:07Z")
    return the_pod


# The Job may not count the failed pod yet when the pods are read: the refusal is the why either way.
@pytest.mark.parametrize("outcome", ["failed", "running"])
def test_pod_refused_at_admission_quotes_its_reason_and_message(outcome):
    lane = lanes_by_name()["l40s-cuda-1gpu"]
    name = PREFIX + lane["name"]
    (result,) = verdict([lane], [job(name, outcome)], [refused(name, "real-l40s")])["lanes"]
    assert (result["result"], result["node"]) == ("failed", "real-l40s")
    assert result["reason"] == ("node real-l40s refused the canary pod (no container ran): UnexpectedAdmissionError: "
                                + ADMISSION_MESSAGE)
    assert result["evidence"] == []  # no container, no output


def test_pod_refused_without_a_message_still_names_the_reason():
    lane = lanes_by_name()["l40s-cuda-1gpu"]
    name = PREFIX + lane["name"]
    (result,) = verdict([lane], [job(name, "failed")], [refused(name, "real-l40s", "OutOfnvidia.com/gpu", "")])["lanes"]
    assert result["reason"] == "node real-l40s refused the canary pod (no container ran): OutOfnvidia.com/gpu"


def test_simulated_gpus_do_not_excuse_a_refused_pod():
    # The testbed's node refused nvidia.com/gpu pods for a stale device checkpoint: no container ran there.
    nodes = [SIMULATED_GPU_NODE]
    lane = lanes_by_name(nodes)["l40s-cuda-1gpu"]
    name = PREFIX + lane["name"]
    (result,) = verdict([lane], [job(name, "failed")], [refused(name, "kind-worker")], nodes=nodes)["lanes"]
    assert result["result"] == "failed"
    assert result["reason"].startswith("node kind-worker refused the canary pod (no container ran): "
                                       "UnexpectedAdmissionError: Allocate failed")


def test_ordinary_container_failure_still_reports_its_exit_code():
    lane = lanes_by_name()["l40s-cuda-1gpu"]
    name = PREFIX + lane["name"]
    # A pod reason alongside a container that ran (an eviction, say) is no refusal: the exit code is the why.
    evicted = refused(name, "real-l40s", "Evicted", "The node was low on resource: memory.")
    evicted["status"]["containerStatuses"] = [{"name": "canary", "state": terminated(137)}]
    for the_pod, code in [(pod(name, "real-l40s", "Failed", terminated(127)), 127), (evicted, 137)]:
        (result,) = verdict([lane], [job(name, "failed")], [the_pod], [log_read(the_pod, NOT_FOUND + "\n")])["lanes"]
        assert (result["result"], result["reason"]) == ("failed", "canary checks failed (exit code %d)" % code)
        assert result["evidence"] == [NOT_FOUND]


def test_unreadable_log_is_scheduled_only():
    result, r = one_lane("l40s-cuda-1gpu", "no-log", "real-l40s", "succeeded", "Succeeded", terminated(0),
                         log=RuntimeError("Failed to get log: the server could not find the requested resource"))
    assert result["result"] == "scheduled-only"
    assert result["reason"] == "log cannot be read: Failed to get log: the server could not find the requested resource"
    assert result["evidence"] == []


def test_log_never_read_is_scheduled_only():
    result, r = one_lane("l40s-cuda-1gpu", "unread", "real-l40s", "succeeded", "Succeeded", terminated(0))
    assert (result["result"], result["reason"]) == ("scheduled-only", "log cannot be read: no log")


def test_no_evidence_line_fails_and_quotes_the_output():
    result, r = one_lane("l40s-cuda-1gpu", "silent", "real-l40s", "succeeded", "Succeeded", terminated(0),
                         log="No devices were found\n")
    assert result["result"] == "failed"
    assert result["reason"] == ("no GPU evidence in the log (no line matches ^[^,]+, [0-9][0-9.]*, [0-9]+ MiB$); "
                                "the job saw no GPU on node real-l40s (nvidia.com/gpu.product=NVIDIA-L40S); the lane "
                                "wants 1 GPU of NVIDIA-L40S (class l40s) on a node with nvidia.com/gpu.product=NVIDIA-L40S")
    assert result["evidence"] == ["No devices were found"]


def test_nvidia_smi_row_proves_a_cuda_lane():
    result, report = one_lane("l40s-cuda-1gpu", "proved", "real-l40s", "succeeded", "Succeeded", terminated(0),
                              log="+ nvidia-smi --query-gpu=name,driver_version,memory.total\n" + GPU_ROW + "\n")
    assert (result["result"], result["reason"]) == ("proved", "nvidia-smi printed a GPU row")
    assert result["evidence"] == [GPU_ROW]
    assert (result["node"], result["node_simulated"]) == ("real-l40s", False)
    assert (result["started_at"], result["finished_at"]) == ("2026-03-02T10:00:05Z", "2026-03-02T10:00:41Z")
    assert result["serves"] == {"gitlab_pools": ["l40s"], "arc_scale_sets": []}
    assert (result["request"], result["resource"], result["count"], result["mig_profile"]) == (
        "nvidia.com/gpu: 1", "nvidia.com/gpu", 1, None)
    assert report["summary"] == {"proved": 1, "scheduled-only": 0, "failed": 0}


def test_mig_device_line_proves_a_mig_lane():
    log = ("GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5a1c)\n"
           "  MIG 1g.10gb     Device  0: (UUID: MIG-88d2)\n")
    result, r = one_lane("a100-cuda-mig-1g-10gb", "mig", "real-a100", "succeeded", "Succeeded", terminated(0), log=log)
    assert (result["result"], result["reason"]) == ("proved", "nvidia-smi -L listed the MIG device")
    assert result["evidence"] == log.splitlines()
    assert result["mig_profile"] == "1g.10gb"


def test_other_mig_profile_is_no_proof():
    # The profile is matched literally: 1g.10gb must not accept 1gx10gb or 1g.20gb.
    log = "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5a1c)\n  MIG 1g.20gb     Device  0: (UUID: MIG-88d2)\n"
    result, r = one_lane("a100-cuda-mig-1g-10gb", "mig-other", "real-a100", "succeeded", "Succeeded", terminated(0),
                         log=log)
    assert result["result"] == "failed"
    assert result["reason"] == (r"no GPU evidence in the log (no line matches ^\s*MIG 1g\.10gb\s+Device\s+[0-9]+:); "
                                "the job saw 1 GPU (NVIDIA A100-SXM4-80GB) with MIG device 1g.20gb on node real-a100 "
                                "(nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB); the lane wants 1 MIG device 1g.10gb of "
                                "NVIDIA-A100-SXM4-80GB (class a100) on a node with nvidia.com/gpu.product=NVIDIA-A100-SXM4-80GB")


def test_render_node_and_discrete_gpu_prove_a_dri_lane():
    log = ("crw-rw---- 1 root render 226, 128 Mar  2 10:00 /dev/dri/renderD128\n"
           "==========\nVULKANINFO\n==========\nDevices:\n========\nGPU0:\n"
           "\tapiVersion         = 1.3.274\n\tdriverVersion      = 24.0.5\n"
           "\tdeviceType         = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU\n\tdeviceName         = AMD Radeon RX 7600\n"
           "\tdriverName         = radv\n")
    result, r = one_lane("dri-dri", "dri", "real-dri", "succeeded", "Succeeded", terminated(0), log=log)
    assert (result["result"], result["reason"]) == ("proved", "the render node exists and vulkaninfo saw a discrete GPU")
    assert result["evidence"] == ["crw-rw---- 1 root render 226, 128 Mar  2 10:00 /dev/dri/renderD128",
                                  "\tdeviceType         = PHYSICAL_DEVICE_TYPE_DISCRETE_GPU",
                                  "\tdeviceName         = AMD Radeon RX 7600", "\tdriverName         = radv"]
    assert (result["request"], result["resource"]) == ("host /dev/dri", None)


def test_integrated_gpu_is_no_dri_proof():
    log = ("crw-rw---- 1 root render 226, 128 Mar  2 10:00 /dev/dri/renderD128\n"
           "\tdeviceType         = PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU\n")
    result, r = one_lane("dri-dri", "dri-igpu", "real-dri", "succeeded", "Succeeded", terminated(0), log=log)
    assert result["result"] == "failed"
    assert result["evidence"] == log.splitlines()


# -- the node table ---------------------------------------------------------------------------------------------

def fleet():
    """Every lane of POOLS/SCALE_SETS: l40s on kwok, MIG proved on real-a100, dri failing on real-dri, h100 nowhere."""
    lanes = lanes_by_name()
    jobs, pods, logs = [], [], []
    for name, node_name, outcome, state, log in [
        ("l40s-cuda-1gpu", "gpu-l40s-0", "succeeded", terminated(0), None),
        ("a100-cuda-mig-1g-10gb", "real-a100", "succeeded", terminated(0),
         "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5a1c)\n  MIG 1g.10gb     Device  0: (UUID: MIG-88d2)\n"),
        ("dri-dri", "real-dri", "failed", terminated(2), "ls: cannot access '/dev/dri/renderD128': No such file\n"),
    ]:
        jobs.append(job(PREFIX + name, outcome))
        pods.append(pod(PREFIX + name, node_name, "Succeeded" if outcome == "succeeded" else "Failed", state))
        if log is not None:
            logs.append(log_read(pods[-1], log))
    return list(lanes.values()), jobs, pods, logs


def test_node_table_lists_landed_and_matched_nodes_real_or_simulated():
    report = verdict(*fleet())
    rows = {row["name"]: row for row in report["nodes"]}
    assert [row["name"] for row in report["nodes"]] == sorted(rows)
    # real-0 and cpu-0 matched no lane and took no pod: not in the table.
    assert set(rows) == {"gpu-l40s-0", "real-l40s", "real-a100", "real-dri"}
    assert rows["gpu-l40s-0"] == {
        "name": "gpu-l40s-0", "simulated": True, "gpus_simulated": False,
        "known_by": "annotation kwok.x-k8s.io/node=fake, label gpuci.runners/simulated=true",
        "landed": ["l40s-cuda-1gpu"], "matched": ["l40s-cuda-1gpu"]}
    assert rows["real-l40s"] == {
        "name": "real-l40s", "simulated": False, "gpus_simulated": False,
        "known_by": "neither annotation kwok.x-k8s.io/node nor label gpuci.runners/simulated=true",
        "landed": [], "matched": ["l40s-cuda-1gpu"]}
    assert rows["real-a100"]["landed"] == ["a100-cuda-mig-1g-10gb"]
    assert report["simulated_nodes"] == ["gpu-l40s-0"]
    assert report["summary"] == {"proved": 1, "scheduled-only": 1, "failed": 2}
    results = {lane["name"]: lane for lane in report["lanes"]}
    assert results["dri-dri"]["evidence"] == ["ls: cannot access '/dev/dri/renderD128': No such file"]
    assert results["h100-cuda-1gpu"]["result"] == "failed"


def test_either_mark_makes_a_node_simulated():
    labelled = node("gpu-l40s-1", {"nvidia.com/gpu.product": "NVIDIA-L40S", "gpuci.runners/simulated": "true"},
                    {"nvidia.com/gpu": "4"})
    annotated = node("gpu-l40s-2", {"nvidia.com/gpu.product": "NVIDIA-L40S"}, {"nvidia.com/gpu": "4"})
    annotated["metadata"]["annotations"]["kwok.x-k8s.io/node"] = "custom"  # kwok run with another selector
    nodes = [labelled, annotated]
    lane = lanes_by_name(nodes)["l40s-cuda-1gpu"]
    assert lane["node_check"]["simulated"] == ["gpu-l40s-1", "gpu-l40s-2"]
    rows = {row["name"]: row for row in node_table([lane], [], nodes)}
    assert rows["gpu-l40s-1"]["known_by"] == "label gpuci.runners/simulated=true"
    assert rows["gpu-l40s-2"]["known_by"] == "annotation kwok.x-k8s.io/node=custom"
    assert all(row["simulated"] for row in rows.values())


def test_without_node_objects_the_node_checks_decide():
    """The node checks read the same marks earlier: a node they found simulated stays simulated."""
    lanes, jobs, pods, logs = fleet()
    report = verdict(lanes, jobs, pods, logs, nodes=[])
    rows = {row["name"]: row for row in report["nodes"]}
    assert (rows["gpu-l40s-0"]["simulated"], rows["gpu-l40s-0"]["known_by"]) == (True, "the node check of its lanes")
    assert rows["real-a100"]["simulated"] is False
    assert rows["real-a100"]["known_by"].startswith("not among the nodes read")
    results = {lane["name"]: lane for lane in report["lanes"]}
    assert results["l40s-cuda-1gpu"]["result"] == "scheduled-only"


def test_a_pod_on_a_node_no_lane_matched_is_listed_with_its_marks():
    lane = lanes_by_name()["l40s-cuda-1gpu"]
    stray = pod(PREFIX + lane["name"], "cpu-0", "Running", running())
    rows = node_table([lane], [stray], NODES)
    assert [(r["name"], r["simulated"], r["landed"], r["matched"]) for r in rows] == [
        ("cpu-0", True, ["l40s-cuda-1gpu"], []),
        ("gpu-l40s-0", True, [], ["l40s-cuda-1gpu"]),
        ("real-l40s", False, [], ["l40s-cuda-1gpu"]),
    ]


def test_a_simulated_mark_anywhere_wins_over_the_lane_own_check():
    """A lane's pod on a node that another lane's check (or the Node) calls simulated is never proved."""
    lane = lanes_by_name()["l40s-cuda-1gpu"]
    name = PREFIX + lane["name"]
    on_cpu = pod(name, "cpu-0", "Succeeded", terminated(0))
    report = verdict([lane], [job(name, "succeeded")], [on_cpu], [log_read(on_cpu, GPU_ROW)])
    assert report["lanes"][0]["result"] == "scheduled-only"


# -- the report contract ----------------------------------------------------------------------------------------

def report_document(model, charts_note=""):
    """The proof report around a verdict, with the fixed cluster fields these tests use."""
    return {"schema_version": SCHEMA_VERSION, "generated_at": NOW, "namespace": NAMESPACE, "charts": [],
            "charts_note": charts_note,
            "cluster": {"name": "c", "context": "", "kubernetes_version": "v1.34.4",
                        "simulated": bool(model["simulated_nodes"]), "simulated_nodes": model["simulated_nodes"]},
            "summary": model["summary"], "nodes": model["nodes"], "lanes": model["lanes"]}


def test_results_fit_the_proof_report_schema():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((ROLE / "files" / "proof-report.schema.json").read_text())
    report = report_document(verdict(*fleet()))
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(report)
    lying = copy.deepcopy(report)
    simulated = next(lane for lane in lying["lanes"] if lane["node_simulated"])
    simulated.update(result="proved", evidence=[GPU_ROW])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(lying, schema)
    without_table = dict(report)
    del without_table["nodes"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(without_table, schema)


def test_no_secret_and_inputs_untouched():
    answers = fleet()
    before = copy.deepcopy(answers)
    report = verdict(*answers)
    assert "glrt-secret" not in json.dumps(report)
    assert answers == before


@pytest.mark.parametrize("change, message", [
    ({"lanes": [{"name": "x", "job_name": "gpu-canary-x"}]}, "verdict.lanes[0].gpu_class: is required"),
    ({"lanes": [{"name": "x"}]}, "verdict.lanes[0].job_name: is required"),
    ({"pods": {"items": []}}, "verdict.pods: must be a list"),
    ({"jobs": ["gpu-canary-x"]}, "verdict.jobs[0]: must be a mapping"),
    ({"checks": {}}, "verdict.lanes[0].check: unknown check"),
    ({"checks": {"nvidia-smi": {"evidence": ["("], "proof": "p"}}}, "verdict.checks.nvidia-smi.evidence[0]: is not a regular expression"),
    ({"checks": {"nvidia-smi": {"evidence": [], "proof": "p"}}}, "verdict.checks.nvidia-smi.evidence: needs at least one pattern"),
    ({"job_timeout": "600"}, "verdict.job_timeout: must be an integer"),
    ({"checked_at": None}, "verdict.checked_at: must be a non-empty string"),
    ({"log": []}, "verdict.log: unknown key"),
])
def test_bad_input_names_the_field(change, message):
    lane = lanes_by_name()["l40s-cuda-1gpu"]
    with pytest.raises(ValidationError) as error:
        verdict([lane], **change) if "lanes" not in change else verdict(change["lanes"])
    assert message in str(error.value)


def test_lane_of_an_older_canary_lanes_is_refused():
    """Lanes said their access mode under `lane` before it became gpu_access: build them again."""
    lane = dict(lanes_by_name()["l40s-cuda-1gpu"])
    lane["lane"] = lane.pop("gpu_access")
    with pytest.raises(ValidationError, match=r"^verdict\.lanes\[0\]\.gpu_access: is required"):
        verdict([lane])


def test_results_say_how_the_pod_reached_the_gpu():
    results = {result["name"]: result for result in verdict(*fleet())["lanes"]}
    assert results["dri-dri"]["gpu_access"] == "dri" and results["l40s-cuda-1gpu"]["gpu_access"] == "cuda"
    assert all("lane" not in result for result in results.values())


def test_lane_without_node_check_is_refused():
    lane = canary_lanes({"gitlab_pools": POOLS[:1]})[0]
    with pytest.raises(ValidationError, match=r"verdict.lanes\[0\].node_check: is required"):
        verdict([lane])


def test_a_lane_list_that_is_no_list_is_refused_and_now_is_the_default_finish():
    with pytest.raises(ValidationError, match="^verdict.lanes: must be a list"):
        canary_verdict({"lanes": {}, "checks": CHECKS, "job_timeout": 600, "checked_at": CHECKED_AT})
    report = canary_verdict({"lanes": [lanes_by_name()["h100-cuda-1gpu"]], "checks": CHECKS, "job_timeout": 600,
                             "checked_at": CHECKED_AT})
    assert report["lanes"][0]["result"] == "failed"
    assert report["lanes"][0]["finished_at"].endswith("Z")  # now, when not given


# -- the Markdown twin ------------------------------------------------------------------------------------------

def render_markdown(model):
    """Render the role's template as ansible.builtin.template does (trim_blocks), with Ansible's regex_replace."""
    jinja2 = pytest.importorskip("jinja2")
    from ansible.plugins.filter.core import regex_replace

    report = report_document(model, charts_note="not collected")
    env = jinja2.Environment(trim_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["regex_replace"] = regex_replace
    template = env.from_string((ROLE / "templates" / "proof-report.md.j2").read_text())
    return template.render(_gpu_canary_report=report)


def table_rows(text, first_header):
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| %s |" % first_header))
    header = [cell.strip() for cell in lines[start].strip("|").split("|")]
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(header, [cell.strip() for cell in line.strip("|").split("|")])))
    return rows


def test_markdown_has_the_node_table_and_the_failed_container_output():
    text = render_markdown(verdict(*fleet()))
    nodes = {row["node"]: row for row in table_rows(text, "node")}
    assert nodes["gpu-l40s-0"]["real or simulated"] == "simulated"
    assert nodes["gpu-l40s-0"]["how it is known"] == "annotation kwok.x-k8s.io/node=fake, label gpuci.runners/simulated=true"
    assert nodes["real-l40s"]["real or simulated"] == "real"
    assert (nodes["real-l40s"]["canary pod of"], nodes["real-l40s"]["matched by"]) == ("-", "l40s-cuda-1gpu")
    # Some nodes are real: the banner does not claim that nothing can be proved.
    assert "**Simulated nodes: lanes on them cannot be proved.**" in text
    assert "no lane can be proved on this cluster" not in text
    assert "Nodes real-a100, real-dri, real-l40s are real." in text
    dri = text.split("### dri-dri")[1].split("###")[0]
    assert "The container's output" in dri
    assert "```\nls: cannot access '/dev/dri/renderD128': No such file\n```" in dri
    mig = text.split("### a100-cuda-mig-1g-10gb")[1].split("###")[0]
    assert "Evidence from the log:" in mig
    assert "No evidence: no container ran on the simulated node." in text.split("### l40s-cuda-1gpu")[1]


def test_markdown_of_an_all_simulated_cluster_says_nothing_can_be_proved():
    lane = lanes_by_name()["l40s-cuda-1gpu"]
    name = PREFIX + lane["name"]
    on_kwok = pod(name, "gpu-l40s-0", "Succeeded", terminated(0))
    only_kwok = [n for n in NODES if n["metadata"]["name"] != "real-l40s"]
    model = verdict([dict(lane, node_check=dict(lane["node_check"], matching=["gpu-l40s-0"]))],
                    [job(name, "succeeded")], [on_kwok], nodes=only_kwok)
    text = render_markdown(model)
    assert "**Simulated nodes: no lane can be proved on this cluster.** Nodes gpu-l40s-0" in text
    assert [row["node"] for row in table_rows(text, "node")] == ["gpu-l40s-0"]
