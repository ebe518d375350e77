# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Faults while a job runs, through the real GitLab Runner on the testbed's real node.

Each test starts a job through the `faults` pool (a script that prints a
numbered tick every second), injects one fault, and records what a platform
team needs to know: the job's final state in GitLab, whether its trace is
complete, when its pod stopped (the GPU it held is free again) and why, and
whether the next job runs. docs/reliability.md's table is FAULTS below; a
test here holds that the table says what these tests assert.

Real: GitLab Runner 19.4.0 (built from its Go module) as the gitlab-runner
chart runs it, its Kubernetes executor, the job pods on real-0 (kubelet,
containerd, runc), the API server the runner talks to, and the kubelet that
enforces a job pod's activeDeadlineSeconds. The stand-in for GitLab
(tools/testbed/gitlab_standin.py) is not GitLab: it has no stuck-job worker,
so a job whose runner vanished stays `running` there, where GitLab fails it
after an hour without updates. The pool requests no GPU (none here): a GPU is
free again when the kubelet has stopped its pod's containers, which is what
these tests time. Faults are injected only into the testbed's own processes
(the API server, by PID, through testbed.py) and into objects this module
created; each test restores what it broke.
"""
from __future__ import annotations

import re
import threading
import time
import uuid
from dataclasses import dataclass

import pytest
import urllib3
from kubernetes import watch
from kubernetes.client.rest import ApiException

from helpers import REPO_ROOT
from lib.images import BASE_IMAGE, GITLAB_RUNNER_HELPER_IMAGE
from lib.layout import Layout
from lib.node import REAL_NODE_LABEL, REAL_NODE_TAINT
from gitlab_runner_support import StandInJobs, trace_text
from reliability_support import control_component, wait_for_controllers_to_resume

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.config import JOB_POD_CLEANUP_GRACE_S

pytestmark = pytest.mark.real_runner

PLAYBOOK = "gitlab_runner.yml"
FLEET = "job-faults"
MANAGER_NS = "gitlab-runner-faults"
JOBS_NS = "gitlab-runner-faults-jobs"
POOL_NAME = "faults"
RELEASE = f"gitlab-runner-{POOL_NAME}"
RUN_ID = uuid.uuid4().hex[:10]
# Only this pool's runner has this tag, so no other test's runner takes these jobs.
TAGS = ["job-faults", "real-node"]
JOB_ANNOTATION_ID = "job.runner.gitlab.com/id"
# How long a fault lasts, and the margins the checks allow past what they expect.
OUTAGE_S = 20
SETTLE_S = 60

POOL = {"name": POOL_NAME, "namespace": JOBS_NS, "cpu_request": "50m", "memory_request": "32Mi", "tags": TAGS,
        "image": BASE_IMAGE, "helper_image": GITLAB_RUNNER_HELPER_IMAGE,
        "node_selector": {REAL_NODE_LABEL: "true"}, "tolerations": [dict(REAL_NODE_TAINT, operator="Equal")],
        "token": f"glrt-gpuci-job-faults-{RUN_ID}"}


# fault: (what the job does, when its pod stops, what the collection sets) -- docs/reliability.md's table.
FAULTS = {
    "the manager pod is evicted (node drain)": (
        "finishes: success, complete trace; the evicted manager stops once its job has ended",
        "seconds after the job ends: the runner deletes it with a 5 s grace period",
        "the chart's SIGQUIT stop and 3600 s grace period let running jobs finish; cleanup_grace_period_seconds 5"),
    "the manager is stopped with a grace period shorter than the job": (
        "lost: the manager is killed mid-job; GitLab shows it running until its stuck-job worker fails it "
        "(an hour without updates); the trace ends where the manager died",
        "at the job's timeout, by the kubelet (activeDeadlineSeconds: the timeout + 1 s)",
        "FF_USE_POD_ACTIVE_DEADLINE_SECONDS pinned on; a pool's extra_config cannot turn it off"),
    "the API server is unavailable for 20 s": (
        "finishes: success, complete trace (the runner reconnects to the job's log and resends it)",
        "after the job ends, once the kubelet's watch of the API server has resumed",
        "nothing: the runner retries its Kubernetes calls"),
    "GitLab is unavailable for 20 s": (
        "finishes: success, complete trace (the runner resends what GitLab missed)",
        "seconds after the job ends: the runner deletes it with a 5 s grace period",
        "nothing: the runner retries its trace and status updates"),
    "the job is cancelled in GitLab": (
        "canceled; the trace ends at the cancel",
        "seconds after the cancel: the runner deletes it with a 5 s grace period",
        "cleanup_grace_period_seconds 5 (with Kubernetes' default the pod held its GPU 30 s more)"),
}


@dataclass
class RunningJob:
    id: int
    mark: str
    ticks: int
    pod: dict
    manager: str
    started: float  # time.monotonic() when the script was seen running
    history: "PodHistory"


def manager_pods(cluster) -> list[dict]:
    return [p for p in cluster.list("v1", "Pod", namespace=MANAGER_NS, label_selector=f"release={RELEASE}")
            if not p["metadata"].get("deletionTimestamp")]


def job_pod_of(cluster, job_id: int) -> dict | None:
    for pod in cluster.list("v1", "Pod", namespace=JOBS_NS):
        if pod["metadata"].get("annotations", {}).get(JOB_ANNOTATION_ID) == str(job_id):
            return pod
    return None


def manager_of(trace: str) -> str:
    """The manager pod that ran a job: the executor's "Running on <pod> via <manager>..." line."""
    line = next(line for line in trace_text(trace).splitlines() if line.startswith("Running on "))
    return line.split(" via ", 1)[1].rstrip(".")


@pytest.fixture(scope="module")
def standin() -> StandInJobs:
    return StandInJobs(Layout.from_environment().gitlab_standin_url)


@pytest.fixture(scope="module")
def pool(testbed, playbooks, real_components, standin):
    """The `faults` pool, converged by the role; removed (state absent) after the module."""
    real_components.require("gitlab-runner")
    variables = {"gitlab_runner_fleet": FLEET, "gitlab_runner_namespace": MANAGER_NS,
                 "gitlab_runner_pools": [POOL]}
    standin.register_runners([POOL])
    playbooks.run(PLAYBOOK, extra_vars=variables).assert_ok()
    yield testbed
    playbooks.run(PLAYBOOK, extra_vars=dict(variables, gitlab_runner_pools=[], gitlab_runner_state="absent")
                  ).assert_ok()


def start_job(cluster, standin: StandInJobs, ticks: int, timeout: int | None = None) -> RunningJob:
    """Queue a job that prints `<mark>-tick-<i>` each second for `ticks` s, then `<mark>-done`; wait until it runs."""
    mark = f"fault-{RUN_ID}-{uuid.uuid4().hex[:6]}"
    script = [f'for i in $(seq 1 {ticks}); do echo "{mark}-tick-$i"; sleep 1; done', f'echo "{mark}-done"']
    job_id = standin.queue(TAGS, script, BASE_IMAGE, "fault", timeout=timeout)
    deadline = time.monotonic() + 180
    while f"{mark}-tick-2" not in trace_text(standin.job(job_id)["trace"]):
        state = standin.job(job_id)["state"]
        assert time.monotonic() < deadline and state in ("pending", "running"), \
            f"job {job_id} never started its script: {state}"
        print(f"waiting up to {deadline - time.monotonic():.0f} s for job {job_id}'s script to start ({state})",
              flush=True)
        time.sleep(2)
    pod = job_pod_of(cluster, job_id)
    assert pod is not None, f"job {job_id} runs, yet no pod in {JOBS_NS} carries its id"
    return RunningJob(job_id, mark, ticks, pod, manager_of(standin.job(job_id)["trace"]), time.monotonic(),
                      PodHistory(cluster, pod))


def ticks_seen(job: RunningJob, trace: str) -> list[int]:
    return [int(n) for n in re.findall(rf"^{re.escape(job.mark)}-tick-(\d+)$", trace_text(trace), re.M)]


def assert_trace_complete(job: RunningJob, ended: dict) -> None:
    trace = trace_text(ended["trace"])
    assert ticks_seen(job, ended["trace"]) == list(range(1, job.ticks + 1)), trace[-3000:]
    assert f"{job.mark}-done" in trace, trace[-3000:]


@dataclass
class PodEnd:
    seconds: float  # from the job's start until the pod was gone or its containers had stopped
    how: str  # "deleted", or the pod's final phase and reason
    deletion_grace_s: int | None  # the grace period of the first deletion, when the pod was seen being deleted


# A watch that breaks is resumed: the API server outage test stops the server under it, and after
# its restart the old resourceVersion is gone (410), so the pod is listed again and watched from there.
WATCH_BREAKS = (ApiException, urllib3.exceptions.HTTPError)
WATCH_SLICE_S = 30  # each watch request's server-side timeout; close() takes effect within one slice


class PodHistory:
    """Every change to one job pod, in order, from a watch started as soon as its job runs.

    A poll a second apart is not enough: the runner deletes a finished job's pod with a 5 s grace
    period, its containers stop within a second, and the kubelet then deletes the pod again with
    grace 0, so a poll could see only that last deletion (it did, once, in CI). The watch sees each
    change, so the grace period the runner asked for is read from its own deletion."""

    def __init__(self, cluster, pod: dict):
        self.name = pod["metadata"]["name"]
        self._changes: list[tuple[float, dict | None]] = [(time.monotonic(), pod)]  # None: the pod is gone
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._failure: Exception | None = None
        threading.Thread(target=self._follow, args=(cluster, pod["metadata"]["resourceVersion"]),
                         name=f"watch of {self.name}", daemon=True).start()

    def changes(self) -> list[tuple[float, dict | None]]:
        assert self._failure is None, f"the watch of job pod {self.name} failed: {self._failure!r}"
        with self._lock:
            return list(self._changes)

    def close(self) -> None:
        self._closed.set()

    def _record(self, pod: dict | None) -> None:
        with self._lock:
            self._changes.append((time.monotonic(), pod))
        if pod is None:
            self._closed.set()

    def _follow(self, cluster, resource_version: str | None) -> None:
        try:
            while not self._closed.is_set():
                try:
                    if resource_version is None:
                        resource_version = self._relist(cluster)
                    resource_version = self._watch(cluster, resource_version)
                except WATCH_BREAKS:
                    resource_version = None
                    self._closed.wait(1)
        # Any failure, not only the expected breaks: the test reading the history reports it.
        except Exception as error:  # pylint: disable=broad-exception-caught
            self._failure = error

    def _relist(self, cluster) -> str | None:
        listing = cluster.core.list_namespaced_pod(JOBS_NS, field_selector=f"metadata.name={self.name}")
        pods = cluster.api_client.sanitize_for_serialization(listing.items)
        self._record(pods[0] if pods else None)
        return listing.metadata.resource_version

    def _watch(self, cluster, resource_version: str) -> str:
        stream = watch.Watch().stream(
            cluster.core.list_namespaced_pod, JOBS_NS, field_selector=f"metadata.name={self.name}",
            resource_version=resource_version, allow_watch_bookmarks=True, timeout_seconds=WATCH_SLICE_S,
            _request_timeout=(10, WATCH_SLICE_S + 10), deserialize=False)
        for event in stream:
            resource_version = event["object"]["metadata"]["resourceVersion"]
            if event["type"] in ("ADDED", "MODIFIED"):
                self._record(event["object"])
            elif event["type"] == "DELETED":
                self._record(None)
                break
        return resource_version


def stopped(changes: list[tuple[float, dict | None]]) -> tuple[float, str, int | None] | None:
    """When and how the pod first stopped, and the grace period of its first deletion; None while it runs."""
    grace = None
    for when, pod in changes:
        if pod is None:
            return when, "deleted", grace
        if grace is None:
            grace = pod["metadata"].get("deletionGracePeriodSeconds")
        status = pod.get("status") or {}
        if status.get("phase") in ("Succeeded", "Failed"):
            return when, f"{status['phase']}: {status.get('reason', '')}", grace
    return None


def wait_pod_stopped(job: RunningJob, timeout: float) -> PodEnd:
    deadline = time.monotonic() + timeout
    try:
        while (end := stopped(changes := job.history.changes())) is None:
            phase = (changes[-1][1].get("status") or {}).get("phase")
            assert time.monotonic() < deadline, f"job pod {job.history.name} still {phase} after {timeout:.0f} s"
            print(f"waiting up to {deadline - time.monotonic():.0f} s for job pod {job.history.name} to stop ({phase})",
                  flush=True)
            time.sleep(1)
    finally:
        job.history.close()
    when, how, grace = end
    return PodEnd(when - job.started, how, grace)


def assert_deleted_by_the_runner(end: PodEnd) -> None:
    """The executor deleted the pod with the grace period the role sets, not Kubernetes' 30 s."""
    assert end.deletion_grace_s in (None, JOB_POD_CLEANUP_GRACE_S), end
    assert end.how == "deleted" or end.how.startswith(("Succeeded", "Failed")), end


def queue_next_job(standin: StandInJobs) -> int:
    """The job after the fault, queued while the faulted job's pod may still be stopping: it must not wait for it."""
    return standin.queue(TAGS, [f"echo next-{RUN_ID}"], BASE_IMAGE, "next")


def assert_next_job_ran(standin: StandInJobs, job_id: int) -> dict:
    after = standin.wait_finished(job_id, 180)
    assert after["state"] == "success", trace_text(after["trace"])[-3000:]
    return after


def record(fault: str, state: str, end: PodEnd) -> None:
    """One line per fault in the test output (pytest -s): what GitLab showed, when and how the pod stopped."""
    print(f"\nFAULT {fault}: job {state}; pod {end.how} {end.seconds:.0f} s after the script started"
          f" (deletion grace {end.deletion_grace_s})", flush=True)


def assert_the_job_survived(cluster, standin: StandInJobs, job: RunningJob, fault: str, pod_bound_s: float) -> int:
    """The job ended with success and its whole trace, and the runner deleted its pod (within `pod_bound_s`).

    Returns the next job, queued as soon as this one ended."""
    ended = standin.wait_finished(job.id, job.ticks + SETTLE_S)
    next_job = queue_next_job(standin)
    end = wait_pod_stopped(job, pod_bound_s)
    record(fault, ended["state"], end)
    assert ended["state"] == "success", trace_text(ended["trace"])[-3000:]
    assert_trace_complete(job, ended)
    assert_deleted_by_the_runner(end)
    return next_job


def test_an_evicted_manager_lets_its_job_finish(pool, standin):
    """A node drain evicts the manager: the chart's SIGQUIT stop lets the job end with success."""
    job = start_job(pool, standin, ticks=15)
    pool.core.create_namespaced_pod_eviction(job.manager, MANAGER_NS, {
        "apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": job.manager, "namespace": MANAGER_NS}})
    after = assert_next_job_ran(standin, assert_the_job_survived(pool, standin, job, "evicted", SETTLE_S))
    assert manager_of(after["trace"]) != job.manager, "the next job should go to the new manager"
    assert job.manager not in [p["metadata"]["name"] for p in manager_pods(pool)]


def test_a_grace_period_shorter_than_the_job_leaves_no_pod_past_the_job_timeout(pool, standin):
    """The manager is killed mid-job; the kubelet stops the orphaned pod at the job's timeout."""
    # The runner counts the job's timeout from when it took the job, the pod's creation and start
    # included: 48 s of that before the script's second tick once on CI's busy VM, when the timeout was
    # 40 s and the job failed before the fault. 120 s leaves room for that twice over.
    timeout = 120
    job = start_job(pool, standin, ticks=300, timeout=timeout)
    assert job.pod["spec"].get("activeDeadlineSeconds") == timeout + 1, job.pod["spec"]
    pool.core.delete_namespaced_pod(job.manager, MANAGER_NS, grace_period_seconds=5)
    # The manager's replacement takes it while the orphaned pod still runs.
    next_job = queue_next_job(standin)
    # The deadline counts from the pod's start, a few seconds before the script's, and the kubelet
    # enforces it at its next sync of the pod, which may come a minute later: a bound, not a timing.
    end = wait_pod_stopped(job, timeout + 3 * SETTLE_S)
    seen = standin.job(job.id)
    record("grace period shorter than the job", seen["state"], end)
    assert end.how == "Failed: DeadlineExceeded", end
    # The stand-in, like GitLab until its stuck-job worker acts, still shows the job running.
    assert seen["state"] == "running", seen["state"]
    assert f"{job.mark}-done" not in trace_text(seen["trace"])
    assert_next_job_ran(standin, next_job)


def test_an_api_server_outage_during_a_job(pool, standin):
    job = start_job(pool, standin, ticks=30)
    try:
        control_component("stop")
        time.sleep(OUTAGE_S)
    finally:
        control_component("start")
    # The runner deletes the pod at once; the kubelet stops it once its own
    # watch of the API server has resumed (up to about a minute here).
    next_job = assert_the_job_survived(pool, standin, job, "API server down", 3 * SETTLE_S)
    wait_for_controllers_to_resume(pool)
    assert_next_job_ran(standin, next_job)


def test_a_gitlab_outage_during_a_job(pool, standin):
    job = start_job(pool, standin, ticks=30)
    standin.outage(OUTAGE_S)
    deadline = time.monotonic() + OUTAGE_S + 30
    while not standin.answers():
        assert time.monotonic() < deadline, "the stand-in did not come back after its outage"
        time.sleep(1)
    assert_next_job_ran(standin, assert_the_job_survived(pool, standin, job, "GitLab down", SETTLE_S))


def test_a_job_cancelled_in_gitlab_stops_and_frees_its_pod(pool, standin):
    job = start_job(pool, standin, ticks=300)
    assert standin.cancel(job.id) == "canceling"
    ended = standin.wait_finished(job.id, SETTLE_S)
    next_job = queue_next_job(standin)
    end = wait_pod_stopped(job, SETTLE_S)
    record("cancelled", ended["state"], end)
    assert ended["state"] == "canceled", trace_text(ended["trace"])[-3000:]
    assert "script canceled externally" in trace_text(ended["trace"])
    assert f"{job.mark}-done" not in trace_text(ended["trace"])
    assert_deleted_by_the_runner(end)
    assert_next_job_ran(standin, next_job)


def test_the_reliability_doc_has_this_table():
    """docs/reliability.md's fault table is FAULTS, row for row."""
    text = (REPO_ROOT / "docs" / "reliability.md").read_text()
    for fault, (job, pod, setting) in FAULTS.items():
        assert f"| {fault} | {job} | {pod} | {setting} |" in text, fault


def test_the_grace_period_read_is_that_of_the_runners_deletion():
    """The kubelet's final deletion (grace 0) after the runner's (grace 5) does not hide the runner's."""
    def pod(phase, grace=None):
        metadata = {"name": "job", "resourceVersion": "1"}
        if grace is not None:
            metadata["deletionGracePeriodSeconds"] = grace
        return {"metadata": metadata, "status": {"phase": phase}}

    runner_then_kubelet = [(0.0, pod("Running")), (1.0, pod("Running", JOB_POD_CLEANUP_GRACE_S)),
                           (1.2, pod("Failed", JOB_POD_CLEANUP_GRACE_S)), (1.3, pod("Failed", 0)), (1.4, None)]
    assert stopped(runner_then_kubelet) == (1.2, "Failed: ", JOB_POD_CLEANUP_GRACE_S)
    assert stopped(runner_then_kubelet[:2]) is None
    assert stopped([(0.0, pod("Running")), (3.0, None)]) == (3.0, "deleted", None)
    assert stopped([(0.0, pod("Running")), (2.0, pod("Failed"))]) == (2.0, "Failed: ", None)
