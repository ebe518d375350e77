# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GitLab pools with gpu_allocation dra: their claim templates planned, applied, checked against the cluster,
pruned and removed, from the real plan and recorded answers of the cluster (fleet/decide.py, gpu/dra_pools.py)."""
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.decide import fleet_decide
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import gitlab_runner_plan

from test_role_plan_action import POOL, gitlab

DRA_POOL = {"name": "h200-dra", "gpu_class": "h200", "gpu_allocation": "dra", "token": "glrt-DRA-SECRET"}
DEVICE_CLASSES = [{"metadata": {"name": "gpu.nvidia.com"}}, {"metadata": {"name": "mig.nvidia.com"}}]


def plan_of(*pools):
    return gitlab_runner_plan(gitlab(gitlab_runner_pools=list(pools)))


def decide(pools, **reads):
    """The gitlab_runner decision and refusals; ``reads``: answers by key, a list (resources) or a whole answer."""
    answers = {key: value if isinstance(value, dict) else {"resources": value} for key, value in reads.items()}
    answers.setdefault("device_classes", {"api_found": True, "resources": DEVICE_CLASSES})
    roles = {"gitlab_runner": {"plan": plan_of(*pools), "pools": list(pools)}}
    decision, refusals = fleet_decide(roles, {"gitlab_runner": answers})
    return decision["gitlab_runner"], refusals


def template_names(objects):
    return [(obj["metadata"]["namespace"], obj["metadata"]["name"]) for obj in objects
            if obj.get("kind") == "ResourceClaimTemplate"]


def test_only_dra_pools_get_a_claim_template_in_their_job_namespace():
    plan = plan_of(POOL, dict(DRA_POOL, namespace="ci-jobs"))
    assert template_names(plan["claim_templates"]) == [("ci-jobs", "h200-dra-gpu")]
    (template,) = plan["claim_templates"]
    assert template["metadata"]["labels"]["gpuci.runners/pool"] == "h200-dra"
    assert template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["deviceClassName"] == "gpu.nvidia.com"
    assert plan["dra_needs"] == [["h200-dra", "gpu.nvidia.com"]]


def test_a_fleet_without_dra_reads_no_device_classes_nodes_or_slices():
    keys = [read["key"] for read in plan_of(POOL)["reads"]]
    assert "claim_templates" in keys  # its own leftovers are looked for on every run
    assert not {"device_classes", "nodes", "resource_slices"} & set(keys)
    assert plan_of(POOL)["claim_templates"] == []


def test_the_claim_template_is_applied_with_the_pools_objects():
    decision, refusals = decide([DRA_POOL])
    assert refusals == []
    assert ("gitlab-runner", "h200-dra-gpu") in template_names(decision["pending"]["apply"])


def test_a_cluster_without_resource_k8s_io_v1_is_refused_naming_the_pools():
    decision, refusals = decide([POOL, DRA_POOL], device_classes={"api_found": False, "resources": []})
    (refusal,) = refusals
    assert refusal.startswith("gitlab_runner_pools: h200-dra ask for their GPU through DRA")
    assert "resource.k8s.io/v1" in refusal


def test_a_missing_device_class_is_refused_naming_the_class_and_the_pools():
    mig = {"name": "mig-dra", "gpu_class": "a100", "mig_profile": "1g.10gb", "gpu_allocation": "dra",
           "token": "glrt-MIG-SECRET"}
    decision, refusals = decide([DRA_POOL, mig], device_classes=[{"metadata": {"name": "gpu.nvidia.com"}}])
    (refusal,) = refusals
    assert "no DeviceClass mig.nvidia.com, which the claims of mig-dra need" in refusal


def test_the_template_of_a_pool_back_on_the_device_plugin_is_deleted_and_named():
    found = {"metadata": {"name": "l40s-gpu", "namespace": "gitlab-runner",
                          "labels": {"gpuci.runners/pool": "l40s"}}, "kind": "ResourceClaimTemplate"}
    decision, refusals = decide([POOL], claim_templates=[found])
    assert refusals == []
    assert template_names(decision["stale_claim_templates"]) == [("gitlab-runner", "l40s-gpu")]
    assert "remove ResourceClaimTemplate gitlab-runner/l40s-gpu" in [
        "%s %s" % (change["action"], change["what"]) for change in decision["changes"]]


def test_the_template_of_a_removed_pool_goes_with_the_pool_not_twice():
    found = {"kind": "ResourceClaimTemplate", "metadata": {"name": "gone-gpu", "namespace": "gitlab-runner",
                                                           "labels": {"gpuci.runners/pool": "gone"}}}
    account = {"kind": "ServiceAccount", "metadata": {"name": "gitlab-runner-gone", "namespace": "gitlab-runner",
                                                      "labels": {"gpuci.runners/pool": "gone"}}}
    decision, refusals = decide([POOL], claim_templates=[found], accounts=[account])
    assert decision["stale_claim_templates"] == []
    assert decision["removals"]["names"] == ["gone"]
    kinds = [read["kind"] for read in decision["removals"]["object_reads"]]
    assert "ResourceClaimTemplate" in kinds


def test_a_node_with_both_a_device_plugin_and_a_dra_slice_is_noted():
    nodes = [{"metadata": {"name": "gpu-1"}, "status": {"allocatable": {"nvidia.com/gpu": "8"}}},
             {"metadata": {"name": "gpu-2"}, "status": {"allocatable": {"nvidia.com/gpu": "0"}}}]
    slices = [{"spec": {"driver": "gpu.nvidia.com", "nodeName": "gpu-1"}},
              {"spec": {"driver": "gpu.nvidia.com", "nodeName": "gpu-2"}},
              {"spec": {"driver": "other.example.com", "nodeName": "gpu-1"}}]
    decision, refusals = decide([DRA_POOL], nodes=nodes, resource_slices=slices)
    assert refusals == []
    notes = [note for note in decision["notes"] if "both through the device plugin" in note]
    assert len(notes) == 1 and notes[0].startswith("node gpu-1 ")
