# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ARC scale sets with gpu_allocation dra: their claim templates planned, applied with the hook ConfigMaps,
checked against the cluster, pruned and left to a removed scale set's removal, from the real plan and recorded
answers of the cluster (arc_runners/plan.py, arc_runners/removals.py, fleet/decide.py, gpu/dra_pools.py)."""
import yaml

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.plan import SCALE_SET_LABEL, arc_runners_plan
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.decide import fleet_decide

from test_role_plan_action import settings

URL = "https://github.com/octo/repo"
PLAIN = {"name": "a10", "github_config_url": URL, "github_token": "ghp_ARC-DRA-SECRET", "gpu_class": "a10"}
DRA = {"name": "h200-dra", "github_config_url": URL, "github_token": "ghp_ARC-DRA-SECRET", "gpu_class": "h200",
       "gpu_allocation": "dra"}
K8S_DRA = {"name": "h200-k8s", "namespace": "arc-k8s", "github_config_url": URL, "github_config_secret": "made",
           "gpu_class": "h200", "gpus": 2, "gpu_allocation": "dra", "container_mode": "kubernetes",
           "work_volume_claim": {"size": "10Gi"}}
DEVICE_CLASSES = [{"metadata": {"name": "gpu.nvidia.com"}}, {"metadata": {"name": "mig.nvidia.com"}}]


def plan_of(*scale_sets, **overrides):
    return arc_runners_plan(settings("arc_runners", arc_runners_scale_sets=list(scale_sets), **overrides))


def decide(scale_sets, **reads):
    """The arc_runners decision and refusals; ``reads``: answers by key, a list (resources) or a whole answer."""
    answers = {key: value if isinstance(value, dict) else {"resources": value} for key, value in reads.items()}
    answers.setdefault("device_classes", {"api_found": True, "resources": DEVICE_CLASSES})
    roles = {"arc_runners": {"plan": plan_of(*scale_sets), "scale_sets": list(scale_sets)}}
    decision, refusals = fleet_decide(roles, {"arc_runners": answers})
    return decision["arc_runners"], refusals


def template_names(objects):
    return [(obj["metadata"]["namespace"], obj["metadata"]["name"]) for obj in objects
            if obj.get("kind") == "ResourceClaimTemplate"]


def found_template(name, namespace, scale_set):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace, "labels": {SCALE_SET_LABEL: scale_set}}}


def changes(decision):
    return ["%s %s" % (change["action"], change["what"]) for change in decision["changes"]]


def test_only_dra_scale_sets_get_a_claim_template_in_their_namespace_labelled_with_the_scale_set():
    plan = plan_of(PLAIN, DRA, K8S_DRA)
    assert template_names(plan["claim_templates"]) == [("arc-runners", "h200-dra-gpu"), ("arc-k8s", "h200-k8s-gpu")]
    whole, k8s = plan["claim_templates"]
    assert whole["metadata"]["labels"][SCALE_SET_LABEL] == "h200-dra"
    assert whole["metadata"]["labels"]["app.kubernetes.io/part-of"] == "gpuci-runners"
    (request,) = k8s["spec"]["spec"]["devices"]["requests"]
    assert request["exactly"]["deviceClassName"] == "gpu.nvidia.com" and request["exactly"]["count"] == 2
    assert plan["dra_needs"] == [["h200-dra", "gpu.nvidia.com"], ["h200-k8s", "gpu.nvidia.com"]]


def test_the_pods_name_the_template_the_plan_makes():
    """The runner pod (mode none) and the kubernetes-mode job pod name the template of the same plan."""
    plan = plan_of(DRA, K8S_DRA)
    runner = next(r for r in plan["releases"] if r["name"] == "h200-dra")["values"]["template"]["spec"]
    (hook,) = plan["configmaps"]
    job = yaml.safe_load(hook["data"]["job-template.yaml"])["spec"]
    named = [claim["resourceClaimTemplateName"] for claim in runner["resourceClaims"] + job["resourceClaims"]]
    assert named == [obj["metadata"]["name"] for obj in plan["claim_templates"]]
    k8s_runner = next(r for r in plan["releases"] if r["name"] == "h200-k8s")["values"]["template"]["spec"]
    assert "resourceClaims" not in k8s_runner


def test_a_fleet_without_dra_reads_its_templates_but_no_device_classes_nodes_or_slices():
    plan = plan_of(PLAIN)
    keys = [read["key"] for read in plan["reads"]]
    assert "claim_templates" in keys  # its own leftovers are looked for on every run
    assert not {"device_classes", "nodes", "resource_slices"} & set(keys)
    assert plan["claim_templates"] == [] and plan["dra_needs"] == []
    decision, refusals = decide([PLAIN], device_classes={"api_found": False, "resources": []})
    assert refusals == [] and decision["stale_claim_templates"] == []


def test_the_claim_templates_are_applied_with_the_hook_configmaps():
    decision, refusals = decide([PLAIN, DRA, K8S_DRA])
    assert refusals == []
    applied = decision["pending"]["apply"]
    assert template_names(applied) == [("arc-runners", "h200-dra-gpu"), ("arc-k8s", "h200-k8s-gpu")]
    assert ("ConfigMap", "h200-k8s-hook-template") in [(o["kind"], o["metadata"]["name"]) for o in applied]
    assert "add ResourceClaimTemplate arc-k8s/h200-k8s-gpu" in changes(decision)


def test_a_template_in_place_is_not_a_change():
    plan = plan_of(DRA)
    decision, refusals = decide([DRA], claim_templates=plan["claim_templates"])
    assert not [line for line in changes(decision) if "ResourceClaimTemplate" in line]
    assert "ResourceClaimTemplate" not in decision["pending"]["summary"]


def test_a_cluster_without_resource_k8s_io_v1_is_refused_naming_the_scale_sets():
    decision, refusals = decide([PLAIN, DRA, K8S_DRA], device_classes={"api_found": False, "resources": []})
    (refusal,) = refusals
    assert refusal.startswith("arc_runners_scale_sets: h200-dra, h200-k8s ask for their GPU through DRA")
    assert "resource.k8s.io/v1" in refusal
    # Refused before any change: nothing to apply, prune or remove.
    assert decision["pending"] == {} and decision["changes"] == [] and decision["stale_claim_templates"] == []


def test_a_missing_device_class_is_refused_naming_the_class_and_the_scale_set():
    mig = {"name": "mig-dra", "github_config_url": URL, "github_token": "ghp_ARC-DRA-SECRET", "gpu_class": "a100",
           "mig_profile": "1g.10gb", "gpu_allocation": "dra"}
    decision, refusals = decide([DRA, mig], device_classes=[{"metadata": {"name": "gpu.nvidia.com"}}])
    (refusal,) = refusals
    assert refusal.startswith("arc_runners_scale_sets: the cluster has no DeviceClass mig.nvidia.com")
    assert "which the claims of mig-dra need" in refusal


def test_the_template_of_a_scale_set_back_on_the_device_plugin_is_pruned_and_named():
    decision, refusals = decide([PLAIN], claim_templates=[found_template("a10-gpu", "arc-runners", "a10")])
    assert refusals == []
    assert decision["stale_claim_templates"] == [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                                                  "metadata": {"name": "a10-gpu", "namespace": "arc-runners"}}]
    assert "remove ResourceClaimTemplate arc-runners/a10-gpu" in changes(decision)
    # Pending on its own, so the role's finishing steps (prune.yml) run even when nothing else changed.
    assert "delete ResourceClaimTemplate arc-runners/a10-gpu" in decision["pending"]["summary"]


def test_a_scale_set_that_moved_namespace_leaves_its_old_template_to_pruning():
    moved = dict(DRA, namespace="elsewhere")
    decision, refusals = decide([moved], claim_templates=[found_template("h200-dra-gpu", "arc-runners", "h200-dra")])
    assert template_names(decision["stale_claim_templates"]) == [("arc-runners", "h200-dra-gpu")]
    assert template_names(decision["pending"]["apply"]) == [("elsewhere", "h200-dra-gpu")]


def test_templates_of_removed_or_undeclared_scale_sets_are_not_pruned():
    """A removed scale set's template goes with it (scale_sets_absent.yml); an undeclared one's may be in use."""
    gone = dict(DRA, name="gone", state="absent")
    decision, refusals = decide([PLAIN, gone], claim_templates=[found_template("gone-gpu", "arc-runners", "gone"),
                                                                found_template("other-gpu", "arc-runners", "other")])
    assert decision["stale_claim_templates"] == []
    # What scale_sets_absent.yml finds the removed one's template by selects the template the plan made.
    (selectors,) = plan_of(PLAIN, gone)["removed_selectors"]
    assert selectors["namespace"] == "arc-runners"
    assert SCALE_SET_LABEL + " in (gone)" in selectors["label_selectors"]
    (made,) = plan_of(dict(gone, state="present"))["claim_templates"]
    labels = made["metadata"]["labels"]
    assert all(labels.get(key) == value for key, value in
               (selector.split("=") for selector in selectors["label_selectors"] if " in " not in selector))


def test_state_absent_plans_no_template_and_removes_every_scale_set():
    plan = plan_of(DRA, arc_runners_state="absent")
    assert plan["claim_templates"] == [] and plan["dra_needs"] == []
    assert [entry["namespace"] for entry in plan["removed_selectors"]] == ["arc-runners"]


def test_a_node_with_both_a_device_plugin_and_a_dra_slice_is_noted():
    nodes = [{"metadata": {"name": "gpu-1"}, "status": {"allocatable": {"nvidia.com/gpu": "8"}}},
             {"metadata": {"name": "gpu-2"}, "status": {"allocatable": {"nvidia.com/gpu": "0"}}}]
    slices = [{"spec": {"driver": "gpu.nvidia.com", "nodeName": "gpu-1"}},
              {"spec": {"driver": "gpu.nvidia.com", "nodeName": "gpu-2"}}]
    decision, refusals = decide([DRA], nodes=nodes, resource_slices=slices)
    assert refusals == []
    notes = [note for note in decision["notes"] if "both through the device plugin" in note]
    assert len(notes) == 1 and notes[0].startswith("node gpu-1 ")
    plain, refusals = decide([PLAIN], nodes=nodes, resource_slices=slices)
    assert not [note for note in plain["notes"] if "both through the device plugin" in note]
