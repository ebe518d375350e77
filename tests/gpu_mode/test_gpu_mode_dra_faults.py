# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""No DRA claim keeps a GPU past its job: when the job is cancelled, and when its runner manager is lost.

The proof inventory (inventories/gpu-proof) is converged with site.yml once for
this module, with test_gpu_mode's extra vars for it (FAKE_AS_H100 on the FAKE
driver, the proof's GPU class; the canary's own are left out: no canary). Its pool
``<class>-dra`` asks for real-0's GPU through Dynamic Resource Allocation: each
job pod names the pool's ResourceClaimTemplate. Each test queues a long job for
that pool, waits until its pod runs on real-0 with its claim allocated
(device gpu-0 of pool real-0), injects one fault, and then holds that the
claim is deleted and that the kubelet unprepared it once the job pod stopped.

Real: GitLab Runner 19.4.0 (the manager the gitlab-runner chart runs on real-0,
its Kubernetes executor, which builds and deletes the job pods), the API
server, the scheduler that allocates the claim from real-0's ResourceSlice,
kube-controller-manager's resource claim controller that makes the claim from
the template and deletes it when its pod is done, the kubelet that prepares and
unprepares it through the DRA plugin's gRPC API and enforces a job pod's
activeDeadlineSeconds, containerd and runc. STAND-INS: the DRA kubelet plugin
(tools/testbed/draplugin, not NVIDIA's: it publishes the slice, hands out the
CDI device ids and logs each prepare and unprepare to
<state>/logs/dra-plugin.log, which is how these tests see an unprepare); the
FAKE driver in CI (no GPU: the sleeping job never touches one); and the
GitLab stand-in (tools/testbed/gitlab_standin.py), which has no stuck-job
worker, so a job whose manager vanished stays `running` there.

"Stopped" for a job pod means deleted or in a terminal phase (Succeeded,
Failed): a pod ended by its deadline stays in the API as Failed, nobody
deletes it, yet its containers are gone and its claim must go too.
"""
from __future__ import annotations

import time
import uuid

import pytest

from gitlab_runner_support import StandInJobs, trace_text
from lib import gpu, images
from lib.images import BASE_IMAGE
from lib.layout import REAL_NODE, Layout
# proof_class is a fixture: pytest finds it here by name, so the import is used though nothing calls it.
from test_gpu_mode import FAKE_AS_H100, PROOF_INVENTORY, proof_class  # noqa: F401  pylint: disable=unused-import

JOBS_NS = "gitlab-runner-jobs"
MANAGER_NS = "gitlab-runner"
CLAIMS = ("resource.k8s.io/v1", "ResourceClaim")
JOB_ANNOTATION_ID = "job.runner.gitlab.com/id"
RUN_ID = uuid.uuid4().hex[:8]
# The bounds: a job's pod and script start (pod, claim allocation, prepare, image already there), the
# runner's reaction to a cancel, and the controller's and kubelet's work after a pod stops.
START_S = 180
SETTLE_S = 60
# The orphaned job's timeout: its pod's activeDeadlineSeconds is this + 1 s, counted from the pod's start;
# the kubelet enforces it at its next sync of the pod, which may come a minute or more later.
ORPHAN_TIMEOUT_S = 60
ORPHAN_BOUND_S = ORPHAN_TIMEOUT_S + 3 * SETTLE_S


@pytest.fixture(scope="module")
def dra_pool(playbooks, gpu_mode, proof_class, layout):  # noqa: F811 (proof_class, imported above)
    """The proof inventory converged (site.yml, as test_gpu_mode's `proof` does; no canary): the DRA pool's name."""
    if "gitlab-runner" not in images.read_real_components(layout):
        pytest.fail("the GitLab Runner image is not in the testbed: its managers would not run on real-0 "
                    "(docs/testbed-images.md)")
    extra = {**(FAKE_AS_H100 if gpu_mode == "fake" else {}), "gpuci_proof_gpu_class": proof_class}
    playbooks.run("site.yml", inventory=PROOF_INVENTORY, extra_vars=extra).assert_ok()
    return f"{proof_class}-dra"


@pytest.fixture(scope="module")
def standin() -> StandInJobs:
    return StandInJobs(Layout.from_environment().gitlab_standin_url)


def tags_of(pool: str) -> list[str]:
    """The pool's tags in inventories/gpu-proof; the role gave its runner these in the stand-in."""
    return ["gpu", "nvidia", "dra", pool]


def claims_on_gpu_0(cluster) -> list[str]:
    """The claims in the jobs namespace that hold real-0's gpu-0 (allocated to it)."""
    held = []
    for claim in cluster.list(*CLAIMS, namespace=JOBS_NS):
        results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
        if any((r.get("pool"), r.get("device")) == (REAL_NODE, "gpu-0") for r in results):
            held.append(claim["metadata"]["name"])
    return held


def wait_for(what: str, check, timeout: float, interval: float = 2):
    """check()'s first truthy answer within `timeout` s, printing what it waits for; None when it never came."""
    deadline = time.monotonic() + timeout
    while True:
        answer = check()
        if answer or time.monotonic() >= deadline:
            return answer
        print(f"waiting up to {deadline - time.monotonic():.0f} s for {what}", flush=True)
        time.sleep(interval)


def job_pod_of(cluster, job_id: int) -> dict | None:
    for pod in cluster.list("v1", "Pod", namespace=JOBS_NS):
        if (pod["metadata"].get("annotations") or {}).get(JOB_ANNOTATION_ID) == str(job_id):
            return pod
    return None


def manager_of(trace: str) -> str:
    """The manager pod that ran a job: the executor's "Running on <pod> via <manager>..." line."""
    line = next(line for line in trace_text(trace).splitlines() if line.startswith("Running on "))
    return line.split(" via ", 1)[1].rstrip(".")


def printed(trace: str, line: str) -> bool:
    """The script printed `line` (a line of its output, not the echo of the command that prints it)."""
    return line in trace_text(trace).splitlines()


def plugin_log(layout) -> str:
    return (layout.logs / "dra-plugin.log").read_text()


class DraJob:
    """A job of the DRA pool seen running: its pod on real-0 and the claim allocated to it."""

    def __init__(self, cluster, standin: StandInJobs, pool: str, timeout: int | None = None):
        self.mark = f"dra-fault-{RUN_ID}-{uuid.uuid4().hex[:6]}"
        # The mark is built at run time, so the trace's echo of the command does not hold the line itself.
        script = [f'm="{self.mark}"; echo "${{m}}-running"', "sleep 300", 'echo "${m}-done"']
        self.id = standin.queue(tags_of(pool), script, BASE_IMAGE, "dra-fault", timeout=timeout)

        def running():
            job = standin.job(self.id)
            assert job["state"] in ("pending", "running"), \
                f"job {self.id} ended before its script ran: {job['state']}\n{trace_text(job['trace'])[-3000:]}"
            return job if printed(job["trace"], f"{self.mark}-running") else None

        job = wait_for(f"job {self.id}'s script to run", running, START_S)
        assert job, f"job {self.id} did not start its script within {START_S} s: {standin.job(self.id)['state']}"
        assert job["runner"] and job["runner"]["description"] == pool, job["runner"]
        self.manager = manager_of(job["trace"])
        pod = job_pod_of(cluster, self.id)
        assert pod is not None, f"job {self.id} runs, yet no pod in {JOBS_NS} carries its id"
        assert (pod["spec"].get("nodeName"), pod["status"].get("phase")) == (REAL_NODE, "Running"), pod["status"]
        (pod_claim,) = pod["spec"]["resourceClaims"]
        assert pod_claim.get("resourceClaimTemplateName") == f"{pool}-gpu", pod_claim
        statuses = {s["name"]: s.get("resourceClaimName") for s in pod["status"].get("resourceClaimStatuses") or []}
        self.pod, self.claim = pod, statuses.get(pod_claim["name"])
        assert self.claim, f"the job pod's status names no claim: {pod['status']}"
        claim = cluster.get(*CLAIMS, self.claim, JOBS_NS)
        assert claim is not None, f"claim {self.claim} of a running pod is not in {JOBS_NS}"
        (result,) = claim["status"]["allocation"]["devices"]["results"]
        assert (result["driver"], result["pool"], result["device"]) == (gpu.DRA_DRIVER, REAL_NODE, "gpu-0"), result
        assert [r.get("uid") for r in claim["status"].get("reservedFor") or []] == [pod["metadata"]["uid"]], claim
        self.claim_uid = claim["metadata"]["uid"]
        print(f"job {self.id} runs in pod {pod['metadata']['name']} on {REAL_NODE} via manager {self.manager}; "
              f"claim {self.claim} (uid {self.claim_uid}) holds {REAL_NODE}/gpu-0", flush=True)

    @property
    def pod_name(self) -> str:
        return self.pod["metadata"]["name"]

    def prepare_line(self) -> str:
        return f"prepare: claim {JOBS_NS}/{self.claim} (uid {self.claim_uid}): "

    def unprepare_line(self) -> str:
        return f"unprepare: claim {JOBS_NS}/{self.claim} (uid {self.claim_uid}): released "


def wait_pod_stopped(cluster, job: DraJob, timeout: float) -> str:
    """How the job pod stopped: "deleted", or its terminal phase and reason. Fails past `timeout`."""
    seen = {}

    def stopped():
        pod = cluster.get("v1", "Pod", job.pod_name, JOBS_NS)
        if pod is None or pod["metadata"]["uid"] != job.pod["metadata"]["uid"]:
            return "deleted"
        seen["status"] = status = pod.get("status") or {}
        if status.get("phase") in ("Succeeded", "Failed"):
            return f"{status['phase']}: {status.get('reason', '')}"
        return None

    how = wait_for(f"job pod {job.pod_name} to stop", stopped, timeout)
    assert how, f"job pod {job.pod_name} still {seen.get('status', {}).get('phase')} after {timeout:.0f} s"
    return how


def assert_claim_released(cluster, layout, job: DraJob) -> None:
    """Once its pod stopped: the claim is deleted, nothing else holds gpu-0, and the kubelet unprepared it."""
    gone = wait_for(f"claim {job.claim} to be deleted",
                    lambda: cluster.get(*CLAIMS, job.claim, JOBS_NS) is None, SETTLE_S)
    assert gone, f"claim {job.claim} outlived its job pod by {SETTLE_S} s: " \
                 f"{(cluster.get(*CLAIMS, job.claim, JOBS_NS) or {}).get('status')}"
    assert claims_on_gpu_0(cluster) == [], "a claim still holds the GPU"
    log = plugin_log(layout)
    assert job.prepare_line() in log, log[-3000:]
    released = wait_for(f"the DRA plugin's log to show unprepare of {job.claim}",
                        lambda: job.unprepare_line() in plugin_log(layout), SETTLE_S)
    assert released, f"the kubelet never unprepared {job.claim}:\n{plugin_log(layout)[-3000:]}"


@pytest.fixture
def gpu_free(testbed, dra_pool):
    """No claim holds gpu-0 before a test (one left from an earlier job would keep this test's pod Pending)."""
    held = wait_for("no claim in the jobs namespace to hold gpu-0", lambda: not claims_on_gpu_0(testbed), SETTLE_S)
    assert held, f"claims hold gpu-0 before the test: {claims_on_gpu_0(testbed)}"
    return testbed


def test_a_cancelled_dra_job_gives_its_gpu_back(gpu_free, dra_pool, standin, layout):
    cluster = gpu_free
    job = DraJob(cluster, standin, dra_pool)
    assert standin.cancel(job.id) == "canceling"
    cancelled = time.monotonic()
    # The runner learns of the cancel at its next job update, then stops the script: 30 s here once.
    ended = standin.wait_finished(job.id, 2 * SETTLE_S)
    assert ended["state"] == "canceled", trace_text(ended["trace"])[-3000:]
    assert not printed(ended["trace"], f"{job.mark}-done")
    # The runner deletes the pod (with its 5 s grace); the pod, not only its containers, goes.
    deleted = wait_for(f"job pod {job.pod_name} to be deleted",
                       lambda: job_pod_of(cluster, job.id) is None, SETTLE_S)
    assert deleted, f"job pod {job.pod_name} still there {SETTLE_S} s after the job was canceled"
    assert_claim_released(cluster, layout, job)
    print(f"\nDRA FAULT cancelled: job {ended['state']}; pod deleted, claim deleted and unprepared "
          f"{time.monotonic() - cancelled:.0f} s after the cancel", flush=True)


def test_a_dra_jobs_claim_goes_with_its_pod_when_the_manager_is_lost(gpu_free, dra_pool, standin, layout):
    """The manager is killed mid-job (5 s grace): whatever the job does, its claim goes once its pod stopped.

    The job pod, orphaned, runs until the kubelet enforces its deadline (FF_USE_POD_ACTIVE_DEADLINE_SECONDS, which
    the role pins on); nobody else releases the claim, so the deadline is what bounds how long it holds the GPU."""
    cluster = gpu_free
    job = DraJob(cluster, standin, dra_pool, timeout=ORPHAN_TIMEOUT_S)
    assert job.pod["spec"].get("activeDeadlineSeconds") == ORPHAN_TIMEOUT_S + 1, job.pod["spec"]
    release = f"gitlab-runner-{dra_pool}"
    managers = [p["metadata"]["name"] for p in cluster.list("v1", "Pod", namespace=MANAGER_NS,
                                                            label_selector=f"release={release}")]
    assert job.manager in managers, (job.manager, managers)
    state = standin.job(job.id)["state"]
    assert state == "running", f"job {job.id} is {state} before the fault: its timeout came first"
    try:
        cluster.core.delete_namespaced_pod(job.manager, MANAGER_NS, grace_period_seconds=5)
        fault = time.monotonic()
        how = wait_pod_stopped(cluster, job, ORPHAN_BOUND_S)
        stopped = time.monotonic() - fault
        seen = standin.job(job.id)
        assert not printed(seen["trace"], f"{job.mark}-done")
        assert_claim_released(cluster, layout, job)
        print(f"\nDRA FAULT manager lost: job {seen['state']} in the stand-in; job pod {how} {stopped:.0f} s after "
              f"the fault; claim deleted and unprepared {time.monotonic() - fault:.0f} s after it", flush=True)
    finally:
        # Nobody deletes a pod ended by its deadline (its manager is gone): the module does, after the checks.
        if cluster.get("v1", "Pod", job.pod_name, JOBS_NS) is not None:
            cluster.core.delete_namespaced_pod(job.pod_name, JOBS_NS, grace_period_seconds=0)

    # What the fault broke comes back: the Deployment's replacement manager, Ready, serves the pool again.
    def replaced():
        return [p["metadata"]["name"] for p in cluster.list("v1", "Pod", namespace=MANAGER_NS,
                                                            label_selector=f"release={release}")
                if p["metadata"]["name"] != job.manager and not p["metadata"].get("deletionTimestamp")
                and any(c["type"] == "Ready" and c["status"] == "True" for c in p["status"].get("conditions") or [])]

    ready = wait_for(f"a Ready manager of {release} other than {job.manager}", replaced, START_S)
    assert ready, cluster.workload_story(MANAGER_NS)
    print(f"replacement manager {ready} Ready {time.monotonic() - fault:.0f} s after the fault", flush=True)
