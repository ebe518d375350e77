# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What each cluster role must change this run, decided from its plan and the one read of the cluster.

Each cluster role plans from the inventory (``role_plan``); the role
``gpuci.runners.converge`` then reads the cluster once for every planned
role (``k8s_reads``) and decides here what its converge must apply, remove,
label and read back:

- ``gpu_operator``: its pending changes (``fleet/pending_changes.py``: the
  namespace, the time-slicing ConfigMap, the RuntimeClass, the release, the
  operator Deployment), the node label patches
  (``gpu_operator/node_labels.py``), whether the time-slicing ConfigMap goes,
  the DCGM exporter's ServiceMonitor on or off (``gpu_operator/plan.py``
  ``service_monitor_release``, which refuses
  ``gpu_operator_dcgm_service_monitor: on`` without the CRD), and the
  refusal of a second GPU Operator on the cluster, or of a switch between
  the device plugin and DRA on a running release (``gpu_operator/owner.py``);
- ``gitlab_runner``: what to remove (``gitlab_runner/removals.py``; a
  converge that would remove every pool the cluster holds while the
  inventory declares none of them is refused, ``whole_fleet_refusal``) and,
  with state present, its pending changes, whose objects hold the pools'
  token Secrets as the inventory gives them
  (``gitlab_runner/token_secrets.py``), and the Secrets of the runners the
  role creates in GitLab (``created_secrets``, still without their token);
  DRA pools' claim templates are among those objects (refused before any
  change on a cluster without resource.k8s.io/v1 or their DeviceClass,
  gpu/dra_pools.py; a template no pool asks for any more goes:
  ``stale_claim_templates``);
  its releases make the chart's PodMonitor or not, as
  ``gitlab_runner_pod_monitors`` and the cluster's PodMonitor CRD decide
  (``gitlab_runner/plan.py`` ``pod_monitor_releases``), which refuses
  ``on`` on a cluster without the CRD;
- ``arc_runners``: its pending changes, whose objects hold the scale sets'
  credentials Secrets (``arc_runners/credential_secrets.py``) and the
  PodMonitors of the controller and listeners where wanted
  (``arc_runners/plan.py`` ``monitor_changes``, which refuses
  ``arc_runners_pod_monitors: on`` without the CRD) and the DRA scale
  sets' claim templates (refused as GitLab's are), and what pruning
  removes (``arc_runners/removals.py``; ``stale_monitors``: our PodMonitors
  no longer wanted; ``stale_claim_templates``: templates no present scale
  set asks for).

Which roles decide, and which of their steps run, is ``steps``
(``fleet/steps.py``: the run's --tags, by Ansible's own rule): ``decide``,
``apply`` (objects and releases) and ``verify`` (read-back and check). The
result, which the converge registers as ``__converge_changes``, holds under
each decided role's name what its own steps read, and for the converge:
whether anything is pending, what will change in words, the objects
(``fleet/objects.py``) and releases of its one apply, the reads of its one
read-back, the roles to finish and the roles to check. It holds Secrets: the
caller shows none of it and keeps it out of Ansible's fact cache.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.credential_secrets import (
    arc_runners_credential_secrets,
)
from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.plan import monitor_changes
from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.removals import (
    arc_runners_removals,
    arc_runners_stale_claim_templates,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import pod_monitor_releases
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra_pools import (
    cluster_refusal,
    doubly_allocated_nodes,
    stale_claim_templates,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.removals import (
    gitlab_runner_removals,
    whole_fleet_refusal,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.token_secrets import (
    gitlab_runner_token_secrets,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.node_labels import gpu_operator_node_labels
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.owner import gpu_operator_owner
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.plan import service_monitor_release
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.changes import change_list
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.objects import fleet_objects
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.pending_changes import pending_changes
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.role_changes import (
    arc_runners_changes,
    gitlab_runner_changes,
    gpu_operator_changes,
)
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.steps import ROLES, STEPS
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError, require_mapping


class _Answers:
    """A role's answers from ``k8s_reads`` (``{key: {resources}}``): the resources of one read, [] when absent."""

    def __init__(self, groups, role):
        self._reads = require_mapping(groups.get(role) or {}, "read.%s" % role)

    def __call__(self, key):
        return list((self._reads.get(key) or {}).get("resources") or [])

    def answer(self, key):
        """The read's whole answer (``api_found`` included), {} when it was not made."""
        return dict(self._reads.get(key) or {})


def gpu_operator_decision(plan, found, check_mode):
    """The GPU Operator's ``{pending, node_patches, remove_time_slicing}`` and its refusal ('' for none)."""
    # The DCGM exporter's ServiceMonitor, as the CRD and gpu_operator_dcgm_service_monitor decide.
    release, refusal = service_monitor_release(plan, found("service_monitor_crd"))
    if refusal:
        return {"pending": {}, "node_patches": [], "remove_time_slicing": False, "changes": [], "notes": []}, refusal
    slicing = plan["time_slicing"]
    patches = gpu_operator_node_labels({
        "nodes": found("nodes"), "label_classes": slicing["label_classes"],
        "class_selectors": slicing["class_selectors"], "labels": plan["node_labels"], "release": release["name"]})
    configmaps = found("configmaps")
    remove_time_slicing = bool(not slicing["enabled"] and configmaps)
    pending = pending_changes({
        "namespaces": [release["namespace"]], "namespace_labels": plan["namespace_labels"],
        "objects": plan["objects"], "create_only": plan["create_only"],
        "found": found("namespace") + configmaps + found("runtime_class"),
        "releases": [release], "release_records": found("release_records"),
        # Until the operator's Deployment exists, it is awaited by name.
        "awaited": found("deployment") or [{"kind": "Deployment", "metadata": {"name": plan["deployment"]}}],
        "steps": (["remove the time-slicing ConfigMap"] if remove_time_slicing else [])
        + [patch["summary"] for patch in patches],
        "readback": plan["readback_reads"], "check_mode": check_mode})
    refusal = gpu_operator_owner({"policies": found("policy"), "gpu_clusters": found("gpu_cluster"),
                                  "cluster_policy": plan["cluster_policy"], "gpu_allocation": plan.get("gpu_allocation"),
                                  "release": release["name"], "namespace": release["namespace"]})
    changes = pending["changes"] + gpu_operator_changes(patches, found("nodes"), configmaps if remove_time_slicing else [])
    return {"pending": pending, "node_patches": patches, "remove_time_slicing": remove_time_slicing,
            "changes": changes, "notes": pending["notes"]}, refusal


def gitlab_runner_decision(plan, found, pools, check_mode):
    """The GitLab runner role's ``{removals, pending, created_pools, created_secrets}``; pending with state present
    only ({}).

    ``pools`` are the pools as the inventory wrote them: the tokens of those
    whose runner the role does not create in GitLab are theirs. The runners
    the role creates get their token only once GitLab answers
    (``created_secrets``: the plan's Secrets of those pools, less, in check
    mode, those in a namespace the run would create: the API server refuses
    even a dry-run create there).
    """
    settings = plan["removal"]
    namespaces = [namespace["metadata"] for namespace in found("namespaces")]
    removals = gitlab_runner_removals({
        "pools": plan["pools"], "found": [account["metadata"] for account in found("accounts")],
        "state": settings["state"], "prune": settings["prune"], "namespace": settings["namespace"],
        "timeout": settings["timeout"], "labels": plan["labels"], "namespaces": namespaces})
    decision = {"removals": removals, "pending": {}, "created_pools": [], "created_secrets": [], "changes": [],
                "notes": [], "stale_claim_templates": []}
    if settings["state"] != "present":
        decision["changes"] = gitlab_runner_changes(plan, removals, _pool_objects(found), found("secrets"), [])
        return decision, ""
    # Pruning every pool the cluster holds, none of them declared, is a lost pool list, not a wish (removals.py).
    refusal = whole_fleet_refusal(plan["pools"], removals, settings)
    if refusal:
        return decision, refusal
    # The chart's PodMonitor, as the CRD's presence and gitlab_runner_pod_monitors decide.
    releases, refusal = pod_monitor_releases(plan, found("pod_monitor_crd"))
    if refusal:
        return decision, refusal
    # DRA pools need resource.k8s.io/v1 and their DeviceClasses, or their jobs would wait forever.
    refusal = cluster_refusal(plan["dra_needs"], found.answer("device_classes"), "gitlab_runner_pools")
    if refusal:
        return decision, refusal
    stale = decision["stale_claim_templates"] = stale_claim_templates(
        found("claim_templates"), plan["claim_templates"], plan["pool_label"], removals["names"])
    created = decision["created_pools"] = list(plan["created_pools"])
    token_secrets = gitlab_runner_token_secrets({
        "secrets": [secret for secret in plan["secrets"] if secret["pool"] not in created],
        "tokens": {pool.get("name"): pool.get("token") or "" for pool in pools}})
    existing = set(namespace["name"] for namespace in namespaces)
    decision["created_secrets"] = [secret for secret in plan["secrets"] if secret["pool"] in created
                                   and not (check_mode and secret["namespace"] not in existing)]
    decision["pending"] = pending_changes({
        "namespaces": plan["namespaces"], "namespace_labels": plan["labels"],
        "objects": plan["access"] + plan["claim_templates"] + token_secrets,
        "found": found("namespaces") + found("accounts") + found("roles") + found("role_bindings")
        + found("claim_templates") + found("secrets"),
        "releases": releases, "release_records": found("release_records"), "awaited": found("managers"),
        # Runners the role creates in GitLab are checked with GitLab on every run.
        "steps": ["remove pool " + name for name in removals["existing"]]
        + ["delete unused namespace " + name for name in removals["unused_namespaces"]]
        + ["delete ResourceClaimTemplate %s/%s (no DRA pool uses it)" % (obj["metadata"]["namespace"],
                                                                         obj["metadata"]["name"]) for obj in stale]
        + ["create or find in GitLab the runner of pool " + name for name in created],
        "readback": plan["readback_reads"], "check_mode": check_mode})
    decision["changes"] = decision["pending"]["changes"] + gitlab_runner_changes(
        plan, removals, _pool_objects(found), found("secrets"), created, stale)
    decision["notes"] = decision["pending"]["notes"] + _double_allocation_notes(plan, found)
    return decision, ""


def _double_allocation_notes(plan, found):
    if not plan["dra_needs"]:
        return []
    return ["node %s hands out its GPUs both through the device plugin (nvidia.com/gpu) and through NVIDIA's DRA "
            "driver: one GPU can go to two pods; run one of them per node" % name
            for name in doubly_allocated_nodes(found("nodes"), found("resource_slices"))]


def _pool_objects(found):
    """The objects of the GitLab pools the read found: what a pool's removal deletes besides its release."""
    return found("accounts") + found("roles") + found("role_bindings") + found("claim_templates") + found("secrets")


def arc_runners_decision(plan, found, scale_sets, check_mode):
    """ARC's ``{pending, removals, stale_monitors, stale_claim_templates}``; ``scale_sets`` as the inventory wrote
    them (their credentials)."""
    controller = [plan["controller"]] if plan["controller"] else []
    refused = {"pending": {}, "removals": {}, "stale_monitors": [], "stale_claim_templates": [], "changes": [],
               "notes": []}
    # The PodMonitors of the controller and the listeners, as the CRD and arc_runners_pod_monitors decide.
    monitors, stale, refusal = monitor_changes(plan, found)
    if refusal:
        return refused, refusal
    # DRA scale sets need resource.k8s.io/v1 and their DeviceClasses, or their pods would wait forever.
    refusal = cluster_refusal(plan["dra_needs"], found.answer("device_classes"), "arc_runners_scale_sets")
    if refusal:
        return refused, refusal
    # A present scale set's template it no longer uses (DRA left, namespace changed); a removed one's goes with it.
    stale_templates = arc_runners_stale_claim_templates(plan, found("claim_templates"))
    credentials = arc_runners_credential_secrets({"secrets": plan["secrets"], "scale_sets": scale_sets})
    pending = pending_changes({
        "namespaces": plan["namespaces"], "namespace_labels": plan["namespace_labels"],
        # The PodMonitors live in the controller's namespace, which this apply creates first.
        "objects": plan["configmaps"] + plan["claim_templates"] + credentials + monitors,
        "found": found("namespaces") + found("secrets") + found("configmaps") + found("claim_templates")
        + found("pod_monitors"),
        "steps": ["remove PodMonitor %s/%s" % (monitor["metadata"]["namespace"], monitor["metadata"]["name"])
                  for monitor in stale]
        + ["delete ResourceClaimTemplate %s/%s (no DRA scale set uses it)" % (obj["metadata"]["namespace"],
                                                                              obj["metadata"]["name"])
           for obj in stale_templates],
        # The removed scale sets' releases are pending until they are gone.
        "releases": controller + plan["releases"] + plan["removals"], "release_records": found("release_records"),
        "apply_releases": controller + plan["releases"], "crds_from": plan["controller"],
        "readback": plan["readback_reads"], "check_mode": check_mode})
    # Every inventory change pruning acts on (credentials, container mode,
    # namespace) also changes the scale set's release, so it is never settled.
    removals = arc_runners_removals({"by_scale_set": plan["by_scale_set"], "scale_set_label": plan["scale_set_label"],
                                     "secrets": found("secrets"), "configmaps": found("configmaps")})
    return {"pending": pending, "removals": removals, "stale_monitors": stale, "stale_claim_templates": stale_templates,
            "changes": pending["changes"] + arc_runners_changes(stale, removals, stale_templates),
            "notes": pending["notes"] + _double_allocation_notes(plan, found)}, ""


def _decision(role, plan, found, entry, check_mode):
    """One role's ``(decision, refusal)``; ``entry`` is its entry of ``roles`` (the inventory's pools or scale sets)."""
    if role == "gpu_operator":
        return gpu_operator_decision(plan, found, check_mode)
    if role == "gitlab_runner":
        return gitlab_runner_decision(plan, found, entry.get("pools") or [], check_mode)
    return arc_runners_decision(plan, found, entry.get("scale_sets") or [], check_mode)


def fleet_decide(roles, read, steps=None, check_mode=False):
    """``(decision, refusals)``: every decided role's decision by name and the converge's lists; why the run
    must stop (none: []).

    ``roles`` maps a role to ``{plan}`` and, for gitlab_runner, ``pools``,
    for arc_runners, ``scale_sets`` (the inventory's, with their secrets);
    ``read`` holds ``k8s_reads``' answers by role; ``steps`` maps a role to
    the steps of its converge the run selects (``fleet_steps``' ``roles``;
    None: every given role, every step). A role decides when it is given and
    ``decide`` is one of its steps.
    """
    require_mapping(roles, "roles")
    require_mapping(read, "read")
    unknown = sorted(set(roles) - set(ROLES))
    if unknown:
        raise ValidationError("roles", "no decision for %s; the cluster roles are %s" % (", ".join(unknown), ", ".join(ROLES)))
    if steps is None:
        steps = dict((role, list(STEPS)) for role in roles)
    require_mapping(steps, "steps")
    decision, refusals, decided = {}, [], []
    for role in ROLES:
        if role not in roles or "decide" not in (steps.get(role) or []):
            continue
        entry = require_mapping(roles[role], "roles.%s" % role)
        plan = require_mapping(entry.get("plan"), "roles.%s.plan" % role)
        decision[role], refusal = _decision(role, plan, _Answers(read, role), entry, check_mode)
        decided.append(role)
        if refusal:
            refusals.append(refusal)
    decision["decided"] = decided
    decision.update(_converge(decision, steps))
    return decision, refusals


def _converge(decision, steps):
    """What the converge does with the decided roles (``decision["decided"]``), in the roles' order:

    - ``pending``: whether one found its plan not in place; ``summary``: each one's pending changes, in words;
    - ``objects`` and ``releases``: what the one apply applies, of the roles whose ``apply`` step runs (each
      object once, fleet/objects.py); ``create_runners``: the GitLab pools whose runner that step creates first;
    - ``readback``: the reads of the one read-back, of the roles whose ``apply`` or ``verify`` step runs (empty
      for a settled role, and in check mode);
    - ``finish``: the roles with something pending, whose own finishing steps run (restarts, pruning, labels);
    - ``verified``: the roles whose ``verify`` step runs, checked against their plans (fleet/readback.py);
    - ``changes``: what each decided role would add, change and remove, with short diffs and no secret
      (fleet/changes.py ``change_list``), which ``playbooks/plan.yml`` and the converge show.
    """
    def pending(role):
        return decision[role]["pending"]

    decided = decision["decided"]
    applied = [role for role in decided if "apply" in steps[role] and pending(role)]
    unsettled = [role for role in decided if pending(role) and not pending(role)["settled"]]
    gitlab = decision.get("gitlab_runner") or {}
    return {
        "pending": bool(unsettled),
        "summary": ["%s: %s" % (ROLES[role], pending(role)["summary"]) for role in decided if pending(role)],
        "objects": fleet_objects([pending(role)["apply"] for role in applied]),
        "releases": [release for role in applied for release in pending(role)["apply_releases"]],
        "create_runners": list(gitlab.get("created_pools") or []) if "gitlab_runner" in applied else [],
        "readback": [entry for role in decided if pending(role) and ({"apply", "verify"} & set(steps[role]))
                     for entry in pending(role)["readback"]],
        "finish": unsettled,
        "verified": [role for role in decided if "verify" in steps[role] and pending(role)],
        # What plan.yml and the converge (check mode too) show: the same list (fleet/changes.py).
        "changes": change_list(decision),
    }
