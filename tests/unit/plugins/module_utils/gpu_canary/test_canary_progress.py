# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""canary_progress: Jobs, pods and nodes as kubernetes.core.k8s_info returns them -> what is still running, what has a log."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.filter.canary_progress import FilterModule
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.progress import canary_progress, job_finish
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

FINISHED_AT = "2026-03-02T10:03:00Z"


def job(name, **status):
    """A Job with backoffLimit 0; ``status`` as the Job controller writes it (counts omitted while zero)."""
    conditions = []
    if status.get("succeeded"):
        conditions = [{"type": "SuccessCriteriaMet", "status": "True"},
                      {"type": "Complete", "status": "True", "lastTransitionTime": FINISHED_AT}]
    elif status.get("failed"):
        conditions = [{"type": "FailureTarget", "status": "True"},
                      {"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded",
                       "lastTransitionTime": FINISHED_AT}]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "gpu-canary"},
            "spec": {"backoffLimit": 0}, "status": dict(status, conditions=conditions) if conditions else status}


def pod(name, node=None, phase="Pending"):
    spec = {"containers": [{"name": "canary"}]}
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "gpu-canary"},
            "spec": spec, "status": {"phase": phase}}


def node(name, kwok=False, simulated_label=False):
    metadata = {"name": name, "labels": {}, "annotations": {}}
    if kwok:
        metadata["annotations"]["kwok.x-k8s.io/node"] = "fake"
    if simulated_label:
        metadata["labels"]["gpuci.runners/simulated"] = "true"
    return {"apiVersion": "v1", "kind": "Node", "metadata": metadata}


STARTED = ["gpu-canary-l40s-cuda-1gpu", "gpu-canary-dri-dri", "gpu-canary-a100-cuda-mig-1g-10gb"]


def test_a_job_is_unfinished_until_one_pod_succeeded_or_failed():
    jobs = [job(STARTED[0], active=1), job(STARTED[1], succeeded=1), job(STARTED[2], failed=1)]
    assert canary_progress({"started": STARTED, "jobs": jobs})["unfinished"] == [STARTED[0]]
    jobs[0] = job(STARTED[0], failed=1)
    assert canary_progress({"started": STARTED, "jobs": jobs})["unfinished"] == []


def test_a_started_job_not_found_is_unfinished_and_a_job_not_started_here_is_ignored():
    jobs = [job(STARTED[1], succeeded=1), job("gpu-canary-left-by-someone", active=1)]
    assert canary_progress({"started": STARTED, "jobs": jobs})["unfinished"] == [STARTED[0], STARTED[2]]


def test_no_job_started_means_nothing_to_wait_for():
    assert canary_progress({"started": [], "jobs": [job(STARTED[0], active=1)]}) == {"unfinished": [], "log_pods": []}


def test_the_finish_is_the_jobs_condition_or_its_type_before_the_condition_is_written():
    assert job_finish(job("a", succeeded=1)) == {"type": "Complete", "status": "True",
                                                 "lastTransitionTime": FINISHED_AT}
    assert job_finish(job("b", failed=1))["reason"] == "BackoffLimitExceeded"
    assert job_finish(job("c", succeeded=1) | {"status": {"succeeded": 1}}) == {"type": "Complete"}
    assert job_finish(job("d", active=1)) == {}
    assert job_finish({"metadata": {"name": "e"}}) == {}


def test_only_pods_that_started_on_a_real_node_have_a_log():
    nodes = [node("real-l40s"), node("gpu-l40s-0", kwok=True), node("labelled-sim", simulated_label=True)]
    pods = [
        pod("ran-real", "real-l40s", "Succeeded"),
        pod("failed-real", "real-l40s", "Failed"),
        pod("running-real", "real-l40s", "Running"),
        pod("waiting-real", "real-l40s", "Pending"),
        pod("unscheduled"),
        pod("on-kwok", "gpu-l40s-0", "Succeeded"),
        pod("on-labelled-sim", "labelled-sim", "Running"),
    ]
    got = canary_progress({"pods": pods, "nodes": nodes})["log_pods"]
    assert [p["metadata"]["name"] for p in got] == ["ran-real", "failed-real", "running-real"]
    # The pods come back as read: the log task's loop item is what the verdict matches logs by.
    assert got[0] == pods[0]


def test_a_pod_on_a_node_not_read_counts_as_real():
    """A node gone since it was read cannot say it is simulated; reading its pod's log only risks an unreadable log."""
    assert len(canary_progress({"pods": [pod("p", "gone", "Succeeded")], "nodes": []})["log_pods"]) == 1


@pytest.mark.parametrize("spec, path", [
    ({"started": "gpu-canary-a"}, "canary_progress.started"),
    ({"jobs": {"metadata": {}}}, "canary_progress.jobs"),
    ({"pods": ["not-a-pod"]}, "canary_progress.pods[0]"),
    ({"nodes": [], "logs": []}, "canary_progress.logs"),
])
def test_bad_input_names_its_path(spec, path):
    with pytest.raises(ValidationError) as error:
        canary_progress(spec)
    assert error.value.path == path


def test_the_filter_raises_a_filter_error():
    with pytest.raises(AnsibleFilterError, match="canary_progress.started"):
        FilterModule().filters()["canary_progress"]({"started": 3})


def test_the_started_jobs_may_be_the_jobs_the_role_built():
    jobs = [job(STARTED[0], active=1), job(STARTED[1], succeeded=1)]
    built = [{"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}} for name in STARTED]
    assert canary_progress({"started": built, "jobs": jobs})["unfinished"] == [STARTED[0], STARTED[2]]
    with pytest.raises(ValidationError, match=r"canary_progress.started"):
        canary_progress({"started": "gpu-canary-x", "jobs": jobs})
