# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The DRA side of pools and scale sets (gpu/dra_pools.py): their claims, templates and what the cluster must offer."""
from ansible_collections.gpuci.runners.plugins.module_utils.gpu import dra_pools

POOLS = [
    {"name": "cpu", "namespace": "jobs"},
    {"name": "l40s", "namespace": "jobs", "gpu_class": "l40s"},
    {"name": "h200", "namespace": "gpu-jobs", "gpu_class": "h200", "gpus": 2, "gpu_allocation": "dra"},
    {"name": "mig", "namespace": "jobs", "gpu_class": "a100", "mig_profile": "1g.10gb", "gpu_allocation": "dra"},
]


def test_only_the_entries_that_ask_for_dra_have_claims():
    claims = dra_pools.entry_claims(POOLS, None, "gitlab_runner_pools")
    assert [(entry["name"], claim.device_class, claim.count) for entry, claim in claims] == [
        ("h200", "gpu.nvidia.com", 2), ("mig", "mig.nvidia.com", 1)]
    assert dra_pools.device_class_needs(claims) == [["h200", "gpu.nvidia.com"], ["mig", "mig.nvidia.com"]]


def test_each_claim_template_is_in_its_entrys_namespace_with_its_labels():
    claims = dra_pools.entry_claims(POOLS, None, "gitlab_runner_pools")
    templates = dra_pools.claim_templates(claims, lambda entry: {"pool": entry["name"]})
    assert [(t["metadata"]["namespace"], t["metadata"]["name"], t["metadata"]["labels"]) for t in templates] == [
        ("gpu-jobs", "h200-gpu", {"pool": "h200"}), ("jobs", "mig-gpu", {"pool": "mig"})]


def test_the_cluster_check():
    needs = [["h200", "gpu.nvidia.com"], ["mig", "mig.nvidia.com"]]
    both = {"api_found": True, "resources": [{"metadata": {"name": "gpu.nvidia.com"}},
                                             {"metadata": {"name": "mig.nvidia.com"}}]}
    assert dra_pools.cluster_refusal(needs, both, "pools") == ""
    assert dra_pools.cluster_refusal([], {"api_found": False}, "pools") == ""  # nothing asks: nothing to check
    old = dra_pools.cluster_refusal(needs, {"api_found": False, "resources": []}, "pools")
    assert old.startswith("pools: h200, mig ask for their GPU through DRA") and "Kubernetes 1.34" in old
    one = {"api_found": True, "resources": [{"metadata": {"name": "gpu.nvidia.com"}}]}
    assert "no DeviceClass mig.nvidia.com, which the claims of mig need" in dra_pools.cluster_refusal(needs, one, "p")


def test_stale_templates_leave_out_the_wanted_and_the_removed_entries():
    def found(namespace, name, pool):
        return {"metadata": {"namespace": namespace, "name": name, "labels": {"pool": pool}}}
    wanted = [found("jobs", "mig-gpu", "mig")]
    live = [found("jobs", "mig-gpu", "mig"), found("jobs", "l40s-gpu", "l40s"), found("jobs", "gone-gpu", "gone"),
            found("other", "mig-gpu", "mig")]
    stale = dra_pools.stale_claim_templates(live, wanted, "pool", removed=["gone"])
    assert [(s["kind"], s["metadata"]["namespace"], s["metadata"]["name"]) for s in stale] == [
        ("ResourceClaimTemplate", "jobs", "l40s-gpu"), ("ResourceClaimTemplate", "other", "mig-gpu")]


def test_doubly_allocated_nodes_need_both_a_device_plugin_resource_and_a_dra_slice():
    nodes = [{"metadata": {"name": name}, "status": {"allocatable": {"nvidia.com/gpu": count}}}
             for name, count in (("both", "1"), ("plugin-only", "4"), ("dra-only", "0"))]
    slices = [{"spec": {"driver": "gpu.nvidia.com", "nodeName": "both"}},
              {"spec": {"driver": "gpu.nvidia.com", "nodeName": "dra-only"}}]
    assert dra_pools.doubly_allocated_nodes(nodes, slices) == ["both"]
