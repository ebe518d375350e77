# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""DRA lanes in the canary: their lane, their canary Job and claim template, what their pods were allocated, the proof.

The cluster's answers are recorded as Kubernetes 1.34 gives them: a pod made
from a ResourceClaimTemplate names its generated claim in
``status.resourceClaimStatuses``; the claim's ``status.allocation.devices.results``
name driver, pool and device, and NVIDIA's DRA driver (and the testbed's
kubelet plugin) names a node's pool after the node. The allocation is gone
once the pod is done, so the reads that see it are those made while it ran.
"""
import copy
import json
import pathlib
from types import SimpleNamespace

import jsonschema
import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary import gitlab_pipeline
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.checks import DRA_HOLD, JOB_PREFIX
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.ci_snippets import NEGATIVE_CONTROL_JOB
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.claims import pod_claims
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.gitlab_jobs import latest_pod, pod_of_job
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.jobs import LANE_LABEL, canary_jobs
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.lanes import canary_lanes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.plan import node_reads
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.progress import canary_progress
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.proof_report import proof_report
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import claim_template_name, device_claim, product_selector

from test_exact_proof import A100_LINE, H200_ROW, MIG_10GB, NOT_A_GPU  # the nvidia-smi lines, as there

REPO = pathlib.Path(__file__).resolve().parents[5]
ROLE = REPO / "roles" / "gpu_canary"
SCHEMA = json.loads((ROLE / "files" / "proof-report.schema.json").read_text())

LABELS = {"app.kubernetes.io/component": "gpu-canary", "app.kubernetes.io/part-of": "gpuci-runners"}
IMAGES = {"cuda": "nvidia/cuda:12.4.1-base-ubuntu22.04", "dri": "ubuntu:24.04"}
# tests/standins/fake_driver.py's GPU, which matches no class (docs/gpu-mode.md).
FAKE_ROW = "gpuci-FAKE-stand-in, 0.0, 0 MiB"

DEVICE_PLUGIN_POOLS = [
    {"name": "h200", "gpu_class": "h200", "gpus": 1, "tags": ["h200"]},
    {"name": "a100-mig", "gpu_class": "a100", "mig_profile": "1g.10gb", "tags": ["a100"]},
    {"name": "cpu", "tags": ["cpu"]},
]
DRA_POOLS = [
    {"name": "h200-dra", "gpu_class": "h200", "gpu_allocation": "dra", "tags": ["h200", "dra"]},
    {"name": "a100-dra-mig", "gpu_class": "a100", "mig_profile": "1g.10gb", "gpu_allocation": "dra", "tags": ["mig"]},
]
DRA_LANE, MIG_LANE = "h200-cuda-dra-1gpu", "a100-cuda-dra-mig-1g-10gb"


def gpu_node(name, product, allocatable=None):
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, "nvidia.com/gpu.product": product}},
            "status": {"allocatable": allocatable or {}}}


# real-0 is docs/proof-h200.md's node; under DRA it advertises no nvidia.com/gpu, its slice says where the GPU is.
NODES = [gpu_node("real-0", "NVIDIA-H200"), gpu_node("real-1", "NVIDIA-H200"),
         gpu_node("real-a100", "NVIDIA-A100-SXM4-80GB"),
         {"metadata": {"name": "cpu-0", "labels": {"kubernetes.io/hostname": "cpu-0"}}, "status": {}}]


def resource_slice(node, driver="gpu.nvidia.com"):
    """A ResourceSlice as the role reads it (spec.devices hidden)."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": "%s-%s-x1" % (node, driver)},
            "spec": {"driver": driver, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}}}


SLICES = [resource_slice("real-0"), resource_slice("real-1"), resource_slice("real-a100")]


def lanes(pools=None, **extra):
    if pools is None:
        pools = DRA_POOLS + DEVICE_PLUGIN_POOLS
    spec = {"gitlab_pools": pools, "cpu_lanes": True, "nodes": NODES, "runtime_classes": ["nvidia"],
            "resource_slices": SLICES}
    spec.update(extra)
    return canary_lanes(spec)


def by_name(result):
    return {lane["name"]: lane for lane in result}


# --- lanes ---------------------------------------------------------------------------------------------------------

def test_a_dra_pool_makes_a_lane_of_its_own_that_says_what_it_claims():
    result = by_name(lanes())
    assert list(result) == [DRA_LANE, MIG_LANE, "h200-cuda-1gpu", "a100-cuda-mig-1g-10gb", "cpu"]
    dra = result[DRA_LANE]
    assert [p["name"] for p in dra["gitlab_pools"]] == ["h200-dra"]
    assert (dra["gpu_allocation"], dra["device_class"], dra["resource"], dra["count"], dra["gpus"], dra["check"]) == (
        "dra", "gpu.nvidia.com", None, 1, 1, "nvidia-smi")
    assert dra["request_text"] == "DRA claim gpu.nvidia.com: 1"
    assert dra["claim"] == {"device_class": "gpu.nvidia.com", "selectors": [product_selector("NVIDIA-H200")],
                            "count": 1}
    # No runtime class: the kubelet plugin hands the GPU over by CDI (gpu/request.py).
    assert dra["runtime_class"] is None and dra["pod_request"]["runtime_class"] == ""
    mig = result[MIG_LANE]
    assert (mig["request_text"], mig["check"], mig["gpus"], mig["device_class"]) == (
        "DRA claim mig.nvidia.com 1g.10gb: 1", "mig", None, "mig.nvidia.com")
    assert mig["claim"]["selectors"][1] == 'device.attributes["gpu.nvidia.com"].profile == "1g.10gb"'


def test_device_plugin_lanes_are_as_they_were_beside_dra_lanes():
    alone = by_name(lanes(DEVICE_PLUGIN_POOLS))
    beside = by_name(lanes())
    for name in alone:
        assert json.dumps(beside[name], sort_keys=False) == json.dumps(alone[name], sort_keys=False), name
        assert "gpu_allocation" not in alone[name] and "claim" not in alone[name]


def test_two_dra_pools_of_one_request_share_a_lane_and_an_explicit_device_plugin_pool_does_not_join_it():
    pools = [dict(DRA_POOLS[0]), dict(DRA_POOLS[0], name="h200-dra-2"),
             {"name": "h200-dp", "gpu_class": "h200", "gpu_allocation": "device_plugin"}]
    # gitlab_runtime_class "": both kinds of pod run without a runtime class; only the allocation tells them apart.
    for runtime_class in (None, ""):
        result = by_name(lanes(pools, gitlab_runtime_class=runtime_class))
        assert [p["name"] for p in result[DRA_LANE]["gitlab_pools"]] == ["h200-dra", "h200-dra-2"]
        assert [p["name"] for p in result["h200-cuda-1gpu"]["gitlab_pools"]] == ["h200-dp"]


def test_a_dra_lane_ends_by_holding_its_claim_for_the_canary_to_read():
    result = by_name(lanes())
    assert result[DRA_LANE]["commands"][-len(DRA_HOLD):] == DRA_HOLD
    assert not set(DRA_HOLD) & set(result["h200-cuda-1gpu"]["commands"])


def test_a_dra_lanes_node_offers_its_gpu_by_nvidias_resource_slice_not_an_allocatable_resource():
    assert by_name(lanes())[DRA_LANE]["node_check"] == {
        "matching": ["real-0", "real-1"], "schedulable": ["real-0", "real-1"], "simulated": [], "ok": True, "reason": ""}
    # Another driver's slice, or none, offers nothing; the device-plugin lane is judged by allocatable as before.
    check = by_name(lanes(resource_slices=[resource_slice("real-0", "dra.example.com")]))[DRA_LANE]["node_check"]
    assert (check["ok"], check["schedulable"]) == (False, [])
    assert check["reason"] == (
        "no schedulable node: nodes real-0, real-1 match nvidia.com/gpu.product=NVIDIA-H200 but none is uncordoned "
        "and has a ResourceSlice of driver gpu.nvidia.com (NVIDIA's DRA driver publishes one for each node whose "
        "GPUs it hands out)")
    assert by_name(lanes())["h200-cuda-1gpu"]["node_check"]["ok"] is False  # no allocatable nvidia.com/gpu here


def test_the_plan_reads_resource_slices_only_for_dra_lanes():
    assert [read["key"] for read in node_reads(lanes(DEVICE_PLUGIN_POOLS))] == ["nodes", "runtime_classes"]
    slices = node_reads(lanes())[-1]
    assert slices == {"key": "resource_slices", "api_version": "resource.k8s.io/v1", "kind": "ResourceSlice",
                      "hidden_fields": ["spec.devices"]}


# --- the canary Job and its claim template -------------------------------------------------------------------------

def jobs(chosen, **extra):
    return canary_jobs(dict({"lanes": chosen, "namespace": "gpu-canary", "labels": LABELS, "images": IMAGES,
                             "image_pull_secrets": [], "deadline": 660, "ttl": 600}, **extra))


def test_a_dra_lanes_job_claims_from_the_canarys_own_template_made_before_it():
    lane = by_name(lanes())[DRA_LANE]
    template, job = jobs([lane])
    name = claim_template_name(lane["job_name"])
    assert (template["kind"], template["metadata"]) == ("ResourceClaimTemplate", {
        "name": name, "namespace": "gpu-canary", "labels": dict(LABELS, **{LANE_LABEL: DRA_LANE})})
    # The claim made from it for the pod is labelled as the canary's, so the role reads it by its labels.
    assert template["spec"]["metadata"] == {"labels": template["metadata"]["labels"]}
    (request,) = template["spec"]["spec"]["devices"]["requests"]
    assert request == {"name": "gpu", "exactly": {
        "deviceClassName": "gpu.nvidia.com", "allocationMode": "ExactCount", "count": 1,
        "selectors": [{"cel": {"expression": product_selector("NVIDIA-H200")}}]}}
    pod = job["spec"]["template"]["spec"]
    assert pod["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": name}]
    (container,) = pod["containers"]
    assert container["resources"] == {"claims": [{"name": "gpu"}]}  # no device plugin limit
    assert "runtimeClassName" not in pod
    assert container["command"][2].endswith("; ".join(DRA_HOLD))


def test_a_mig_dra_lanes_template_asks_for_one_device_of_the_mig_class_and_profile():
    lane = by_name(lanes())[MIG_LANE]
    template, _job = jobs([lane])
    exactly = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    claim = device_claim({"product": "NVIDIA-A100-SXM4-80GB", "dra_selector": None}, 1, "1g.10gb")
    assert (exactly["deviceClassName"], exactly["count"]) == ("mig.nvidia.com", 1)
    assert [s["cel"]["expression"] for s in exactly["selectors"]] == claim.selectors


def test_device_plugin_lanes_get_their_job_alone_and_gitlab_mode_leaves_dra_gitlab_lanes_to_gitlab():
    chosen = [dict(lane, node_check=dict(lane["node_check"], ok=True)) for lane in lanes(cpu_lanes=False)]
    built = jobs(chosen)
    assert [(obj["kind"], obj["metadata"]["name"]) for obj in built] == [
        ("ResourceClaimTemplate", JOB_PREFIX + DRA_LANE + "-gpu"), ("Job", JOB_PREFIX + DRA_LANE),
        ("ResourceClaimTemplate", JOB_PREFIX + MIG_LANE + "-gpu"), ("Job", JOB_PREFIX + MIG_LANE),
        ("Job", JOB_PREFIX + "h200-cuda-1gpu"), ("Job", JOB_PREFIX + "a100-cuda-mig-1g-10gb")]
    assert jobs(chosen, gitlab_mode=True) == []


# --- reading the claims while the pods run -------------------------------------------------------------------------

def pod(job_name, node="real-0", phase="Running", claim_name="auto", namespace="gpu-canary", conditions=None):
    """The canary Job's pod as the API returns it: its claim named in its status once the controller made it."""
    name = job_name + "-x7k2p"
    status = {"phase": phase, "conditions": conditions or [{"type": "PodScheduled", "status": "True"}],
              "containerStatuses": [{"name": "canary", "state": {"terminated": {"exitCode": 0}}}]}
    if claim_name:
        status["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": name + "-gpu-8c9vq"
                                            if claim_name == "auto" else claim_name}]
    spec = {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": job_name + "-gpu"}],
            "containers": [{"name": "canary", "resources": {"claims": [{"name": "gpu"}]}}]}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": namespace, "ownerReferences": [{"kind": "Job", "name": job_name}]},
            "spec": spec, "status": status}


def claim(for_pod, pools=("real-0",), namespace="gpu-canary"):
    """The ResourceClaim made for ``for_pod``, allocated one device from each of ``pools`` (none: unallocated)."""
    results = [{"request": "gpu", "driver": "gpu.nvidia.com", "pool": pool, "device": "gpu-%d" % index}
               for index, pool in enumerate(pools)]
    status = {"allocation": {"devices": {"results": results}}, "reservedFor": [
        {"resource": "pods", "name": for_pod["metadata"]["name"], "uid": "u1"}]} if results else {}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": for_pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"],
                         "namespace": namespace, "ownerReferences": [{"kind": "Pod", "name": for_pod["metadata"]["name"]}]},
            "spec": {"devices": {"requests": [{"name": "gpu"}]}}, "status": status}


def test_pod_claims_names_each_allocated_device_and_a_claim_without_one():
    job_name = JOB_PREFIX + DRA_LANE
    seen = pod(job_name)
    assert pod_claims(seen, [claim(seen)]) == [
        {"name": "gpu", "claim": job_name + "-x7k2p-gpu-8c9vq", "driver": "gpu.nvidia.com", "pool": "real-0",
         "device": "gpu-0"}]
    assert pod_claims(seen, [claim(seen, pools=())]) == [
        {"name": "gpu", "claim": job_name + "-x7k2p-gpu-8c9vq", "driver": None, "pool": None, "device": None}]
    # A claim of another namespace is another pod's; a pod without claims has none.
    assert pod_claims(seen, [claim(seen, namespace="other")])[0]["device"] is None
    assert pod_claims({"spec": {"containers": []}}, [claim(seen)]) == []


def test_the_claim_wait_ends_once_each_dra_pod_was_seen_allocated_or_can_no_longer_be():
    chosen = [lane for lane in lanes() if lane["name"] in (DRA_LANE, "h200-cuda-1gpu")]
    chosen[1] = dict(chosen[1], node_check=dict(chosen[1]["node_check"], ok=True))
    started = jobs(chosen)
    job_name = JOB_PREFIX + DRA_LANE
    running = pod(job_name)

    def pending(pods, claims, jobs_=()):
        return canary_progress({"started": started, "jobs": list(jobs_), "pods": pods, "claims": claims})

    # The claim template is no Job: only the Jobs are waited for.
    assert pending([], [])["unfinished"] == [job_name, JOB_PREFIX + "h200-cuda-1gpu"]
    assert pending([], [])["claims_pending"] == [job_name]  # its pod is not made yet
    assert pending([pod(job_name, node=None, claim_name=None, phase="Pending")], [])["claims_pending"] == [job_name]
    assert pending([running], [claim(running, pools=())])["claims_pending"] == [job_name]
    assert pending([running], [claim(running)])["claims_pending"] == []
    # Too late (the allocation is gone) or never coming (unschedulable): the wait ends, the verdict says why.
    assert pending([pod(job_name, phase="Succeeded")], [])["claims_pending"] == []
    unschedulable = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]
    assert pending([pod(job_name, node=None, phase="Pending", conditions=unschedulable)], [])["claims_pending"] == []
    finished = {"metadata": {"name": job_name}, "status": {"succeeded": 1}}
    assert pending([], [], [finished])["claims_pending"] == []
    # Without claims to look at, the answer is the one it always was.
    assert set(canary_progress({"started": started})) == {"unfinished", "log_pods"}


# --- the verdict on the canary Job ---------------------------------------------------------------------------------

def canary_job_verdict(lane_name, node, lines, claims_read, pod_node=None):
    lane = by_name(lanes())[lane_name]
    job_name = lane["job_name"]
    job = {"metadata": {"name": job_name}, "status": {"startTime": "t0", "succeeded": 1, "conditions": [
        {"type": "Complete", "status": "True", "lastTransitionTime": "t1"}]}}
    ran = pod(job_name, node=pod_node or node, phase="Succeeded")
    claims = claims_read(ran)
    document = proof_report({"lanes": [lane], "jobs": [job], "pods": [ran], "logs": [{"pod": ran, "log_lines": lines}],
                             "nodes": NODES, "claims": claims, "job_timeout": 60, "checked_at": "2026-01-01T00:00:00Z",
                             "now": "2026-01-01T00:05:00Z", "cluster": {"name": "c", "simulated": False},
                             "namespace": "gpu-canary", "generated_at": "2026-01-01T00:05:00Z"})
    jsonschema.Draft202012Validator(SCHEMA).validate(document)
    (result,) = document["lanes"]
    return result


def test_a_dra_lane_is_proved_by_its_row_and_the_device_allocated_from_its_node():
    result = canary_job_verdict(DRA_LANE, "real-0", [H200_ROW] + DRA_HOLD[:1], lambda ran: [claim(ran)])
    assert (result["result"], result["reason"]) == (
        "proved", "nvidia-smi printed a GPU row; its claim was allocated device gpu-0 of pool real-0, its node's"), result["reason"]
    assert (result["gpu_allocation"], result["claim"]["device_class"], result["claim"]["count"]) == (
        "dra", "gpu.nvidia.com", 1)
    assert [(c["driver"], c["pool"], c["device"]) for c in result["claims"]] == [("gpu.nvidia.com", "real-0", "gpu-0")]
    assert result["evidence"] == [H200_ROW]


def test_a_mig_dra_lane_is_proved_by_its_mig_device_and_allocation():
    result = canary_job_verdict(MIG_LANE, "real-a100", [A100_LINE, MIG_10GB], lambda ran: [claim(ran, ("real-a100",))])
    assert result["result"] == "proved", result["reason"]


@pytest.mark.parametrize("claims_read, says", [
    (lambda ran: [], "its claim shows no allocated device: none was allocated, or none was seen while the pod ran, "
                     "the only time a claim shows one"),
    (lambda ran: [claim(ran, pools=())], "its claim shows no allocated device"),
    (lambda ran: [claim(ran, ("real-1",))], "device gpu-0 is allocated from pool real-1, not from its node real-0"),
    (lambda ran: [claim(ran, ("real-0", "real-0"))], "2 devices allocated to its claim, not 1"),
])
def test_a_dra_lane_without_the_right_allocation_is_never_proved(claims_read, says):
    result = canary_job_verdict(DRA_LANE, "real-0", [H200_ROW], claims_read)
    assert result["result"] == "failed"
    assert result["reason"].startswith("not what the lane promises: the job saw 1 GPU (NVIDIA H200)"), result["reason"]
    assert says in result["reason"], result["reason"]


def test_the_fake_driver_proves_no_dra_lane_even_with_an_allocation():
    result = canary_job_verdict(DRA_LANE, "real-0", [FAKE_ROW], lambda ran: [claim(ran)])
    assert result["result"] == "failed"
    assert "GPU gpuci-FAKE-stand-in is not the class's NVIDIA-H200" in result["reason"]


def test_a_device_plugin_lanes_report_has_no_dra_fields():
    lane = by_name(lanes(DEVICE_PLUGIN_POOLS, resource_slices=[]))["h200-cuda-1gpu"]
    document = proof_report({"lanes": [dict(lane, node_check=dict(lane["node_check"], ok=True))], "nodes": NODES,
                             "job_timeout": 60, "checked_at": "2026-01-01T00:00:00Z", "now": "2026-01-01T00:05:00Z",
                             "cluster": {"name": "c"}, "namespace": "gpu-canary",
                             "generated_at": "2026-01-01T00:05:00Z"})
    assert not {"gpu_allocation", "claim", "claims"} & set(document["lanes"][0])


# --- GitLab jobs of DRA pools --------------------------------------------------------------------------------------

def runner_pod(job_id, node="real-0", phase="Running", claimed=True):
    """GitLab Runner's job pod of a DRA pool: the pool's template, the build container naming the claim."""
    name = "runner-abc-project-1-concurrent-%d" % job_id
    spec = {"nodeName": node, "containers": [{"name": "build", "resources": {"claims": [{"name": "gpu"}]}},
                                             {"name": "helper"}]}
    status = {"phase": phase}
    if claimed:
        spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "h200-dra-gpu"}]
        status["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": name + "-gpu-q2w4e"}]
    return {"metadata": {"name": name, "namespace": "gitlab-jobs", "annotations": {"job.runner.gitlab.com/id": str(job_id)},
                         "labels": {"project.runner.gitlab.com/id": "1"}}, "spec": spec, "status": status}


def test_a_dra_pools_job_pod_says_what_its_claim_was_allocated():
    seen = pod_of_job([runner_pod(1)], 1, claims=[claim(runner_pod(1), namespace="gitlab-jobs")])
    assert seen["device_limits"] == {} and seen["runtime_class"] is None
    assert seen["claims"] == [{"name": "gpu", "claim": "runner-abc-project-1-concurrent-1-gpu-q2w4e",
                               "driver": "gpu.nvidia.com", "pool": "real-0", "device": "gpu-0"}]
    # A device-plugin pod's summary is as it always was: no claims key.
    assert "claims" not in pod_of_job([runner_pod(2, claimed=False)], 2)


def test_an_allocation_seen_while_the_job_ran_outlives_the_claims_deletion():
    earlier = pod_of_job([runner_pod(1)], 1, claims=[claim(runner_pod(1), namespace="gitlab-jobs")])
    later = pod_of_job([runner_pod(1, phase="Succeeded")], 1, claims=[])
    kept = latest_pod(later, earlier)
    assert kept["phase"] == "Succeeded" and kept["claims"] == earlier["claims"]
    assert latest_pod(None, earlier) == earlier
    assert latest_pod(earlier, None) == earlier


def test_the_module_reads_the_claims_its_job_pods_name_while_it_polls():
    """_watch with recorded answers: pending, running with the claim allocated, done with the claim deleted."""
    polls = [([runner_pod(1, phase="Pending", claimed=False)], "pending"),
             ([runner_pod(1)], "running"),
             ([runner_pod(1, phase="Succeeded")], "success")]
    claims_asked = []

    def listed_jobs(get_all):
        status = polls[0][1]
        return [SimpleNamespace(attributes={"id": 1, "name": "gpu-canary-h200-dra", "status": status,
                                            "tag_list": ["h200"], "started_at": None if status == "pending" else "t0"})]

    pipeline = SimpleNamespace(attributes={"id": 7}, jobs=SimpleNamespace(list=listed_jobs))

    def list_pods(project_id):
        return polls[0][0]

    def list_claims(pods):
        claims_asked.append(gitlab_pipeline.claim_names(pods))
        # The claim exists while the pod runs; once it is done the controller has deleted it.
        return [claim(p, namespace="gitlab-jobs") for p in pods if p["status"]["phase"] == "Running"]

    clock = iter(range(100))
    project = SimpleNamespace(attributes={"id": 1})
    jobs_ = gitlab_pipeline._watch(project, pipeline, {"pending_timeout": 60, "run_timeout": 60, "poll_interval": 1},
                                   (list_pods, list_claims), lambda line: None, lambda seconds: polls.pop(0),
                                   lambda: next(clock))
    named = [("gitlab-jobs", "runner-abc-project-1-concurrent-1-gpu-q2w4e")]
    assert claims_asked == [[], named, named]  # nothing to read while the pod had no claim yet
    (job,) = list(jobs_.values())
    assert job["pod"]["phase"] == "Succeeded"
    assert [(c["pool"], c["device"]) for c in job["pod"]["claims"]] == [("real-0", "gpu-0")]


def gitlab_report(pool_claims, trace=(H200_ROW,), node="real-0"):
    chosen = list(lanes([DRA_POOLS[0], {"name": "cpu", "tags": ["cpu"]}]))
    pod = {"name": "runner-1", "namespace": "gitlab-jobs", "node": node, "phase": "Running", "runtime_class": None,
           "device_limits": {}, "claims": pool_claims}

    def job(job_id, lines, seen):
        return {"id": job_id, "status": "success", "web_url": "http://gitlab/g/c/-/jobs/%d" % job_id,
                "runner": {"id": job_id, "description": "r"}, "started": "2026-01-01T00:00:01Z",
                "finished": "2026-01-01T00:00:09Z", "gave_up": "", "pod": seen, "trace": list(lines)}

    cpu_pod = {"name": "runner-2", "namespace": "gitlab-jobs", "node": "real-0", "phase": "Running"}
    jobs_ = {"gpu-canary-h200-dra": job(1, ["$ nvidia-smi ..."] + list(trace), pod),
             "gpu-canary-cpu": job(2, ["gpu-canary: CPU job ran on runner-2 (Linux)",
                                       "gpu-canary: the checkout holds .gitlab-ci.yml"], cpu_pod),
             NEGATIVE_CONTROL_JOB: job(3, ["gpu-canary: negative control on runner-3, a pod", NOT_A_GPU], cpu_pod)}
    gitlab = {"project": {"id": 1, "path": "g/canary", "web_url": "http://gitlab/g/canary"}, "ref": "main",
              "file": ".gitlab-ci.yml", "commit": None,
              "pipeline": {"id": 7, "web_url": "http://gitlab/g/c/-/pipelines/7", "status": "success"}, "jobs": jobs_}
    document = proof_report({"lanes": chosen, "nodes": NODES, "job_timeout": 60, "checked_at": "2026-01-01T00:00:00Z",
                             "now": "2026-01-01T00:05:00Z", "gitlab": gitlab, "gitlab_job_timeout": 60,
                             "cluster": {"name": "c"}, "namespace": "gpu-canary",
                             "generated_at": "2026-01-01T00:05:00Z"})
    jsonschema.Draft202012Validator(SCHEMA).validate(document)
    return document


ALLOCATED = [{"name": "gpu", "claim": "runner-1-gpu-q2w4e", "driver": "gpu.nvidia.com", "pool": "real-0",
              "device": "gpu-0"}]


def test_a_dra_pools_gitlab_job_proves_its_lane_with_its_claims_allocation():
    document = gitlab_report(ALLOCATED)
    lane = next(lane for lane in document["lanes"] if lane["name"] == DRA_LANE)
    assert lane["result"] == "proved", lane["reason"]
    (job,) = lane["gitlab_jobs"]
    assert job["claims"] == ALLOCATED and job["device_limits"] == {}
    assert lane["claims"] == ALLOCATED  # the lane's, from its GitLab job: it has no canary Job
    cpu = next(lane for lane in document["lanes"] if lane["name"] == "cpu")
    assert "claims" not in cpu["gitlab_jobs"][0]


def test_a_dra_pools_gitlab_job_without_an_allocation_seen_proves_nothing():
    document = gitlab_report([dict(ALLOCATED[0], driver=None, pool=None, device=None)])
    lane = next(lane for lane in document["lanes"] if lane["name"] == DRA_LANE)
    assert lane["result"] == "failed"
    assert "its claim shows no allocated device" in lane["reason"], lane["reason"]
    assert "proved" not in [job["result"] for job in lane["gitlab_jobs"]]


def test_the_schema_refuses_a_proved_dra_lane_without_an_allocated_device():
    document = gitlab_report(ALLOCATED)
    broken = copy.deepcopy(document)
    lane = next(lane for lane in broken["lanes"] if lane["name"] == DRA_LANE)
    lane["claims"] = [dict(ALLOCATED[0], device=None, pool=None, driver=None)]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(SCHEMA).validate(broken)
    del lane["claims"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(SCHEMA).validate(broken)


def render(document):
    jinja2 = pytest.importorskip("jinja2")
    from ansible.plugins.filter.core import regex_replace

    env = jinja2.Environment(trim_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["regex_replace"] = regex_replace
    return env.from_string((ROLE / "templates" / "proof-report.md.j2").read_text()).render(_gpu_canary_report=document)


def test_the_markdown_shows_the_claim_and_the_allocated_device_beside_the_row():
    text = render(gitlab_report(ALLOCATED))
    section = text.split("### %s" % DRA_LANE)[1].split("###")[0]
    assert "DRA (dra): the pods claim 1 device of DeviceClass `gpu.nvidia.com` where `%s`." % product_selector(
        "NVIDIA-H200") in section
    assert ("claims: `gpu` (ResourceClaim `runner-1-gpu-q2w4e`): device `gpu-0` of pool `real-0`, driver "
            "`gpu.nvidia.com`;") in section
    assert H200_ROW in section
    assert "| %s | h200 | DRA claim gpu.nvidia.com: 1 |" % DRA_LANE in text
    # The CPU lane's section says nothing of claims.
    assert "claims:" not in text.split("### cpu")[1]


def test_the_markdown_of_a_canary_jobs_dra_lane_names_its_pods_claim():
    lane = by_name(lanes())[DRA_LANE]
    job_name = lane["job_name"]
    ran = pod(job_name, phase="Succeeded")
    job = {"metadata": {"name": job_name}, "status": {"startTime": "2026-01-01T00:00:01Z", "succeeded": 1}}
    document = proof_report({"lanes": [lane], "jobs": [job], "pods": [ran], "logs": [{"pod": ran, "log_lines": [H200_ROW]}],
                             "nodes": NODES, "claims": [claim(ran)], "job_timeout": 60,
                             "checked_at": "2026-01-01T00:00:00Z", "now": "2026-01-01T00:05:00Z",
                             "cluster": {"name": "c"}, "namespace": "gpu-canary", "generated_at": "2026-01-01T00:05:00Z"})
    text = render(document)
    assert "Claims of its pod: `gpu` (ResourceClaim `%s-x7k2p-gpu-8c9vq`): device `gpu-0` of pool `real-0`" % job_name \
        in text


def test_the_pod_lister_reads_each_claim_its_pods_name_and_nothing_for_pods_without(monkeypatch):
    """pod_lister's reads through kubernetes.core's client, answered by a stand-in for the API server."""
    client_module = pytest.importorskip("ansible_collections.kubernetes.core.plugins.module_utils.k8s.client")
    running = runner_pod(1)
    asked = []

    class Answer:
        def __init__(self, value):
            self.value = value

        def to_dict(self):
            return self.value

    class Resource:
        def __init__(self, kind):
            self.kind = kind

        def get(self, **query):
            asked.append((self.kind, query))
            if self.kind == "Pod":
                return Answer({"items": [running, runner_pod(2, claimed=False)]})
            return Answer(claim(running, namespace="gitlab-jobs"))

    resources = SimpleNamespace(get=lambda api_version, kind: Resource(kind))
    monkeypatch.setattr(client_module, "get_api_client", lambda **kwargs: SimpleNamespace(resources=resources))
    list_pods, list_claims, problem = gitlab_pipeline.pod_lister()
    assert problem == ""
    pods = list_pods(1)
    assert [c["metadata"]["name"] for c in list_claims(pods)] == ["runner-abc-project-1-concurrent-1-gpu-q2w4e"]
    assert list_claims([runner_pod(2, claimed=False)]) == []
    assert asked == [("Pod", {"label_selector": "project.runner.gitlab.com/id=1"}),
                     ("ResourceClaim", {"name": "runner-abc-project-1-concurrent-1-gpu-q2w4e",
                                        "namespace": "gitlab-jobs"})]
