# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What each cluster role must change this run, decided from its plan and the one read of the cluster.

Each cluster role plans from the inventory (``role_plan``), reads the
cluster once (``k8s_reads``, in site.yml once for every role) and then
decides here what a converge must apply, remove, label and read back:

- ``gpu_operator``: its pending changes (``fleet/pending_changes.py``: the
  namespace, the time-slicing ConfigMap, the RuntimeClass, the release, the
  operator Deployment), the node label patches
  (``gpu_operator/node_labels.py``) and the refusal of a second GPU Operator
  on the cluster (``gpu_operator/owner.py``);
- ``gitlab_runner``: what to remove (``gitlab_runner/removals.py``) and,
  with state present, its pending changes, whose objects hold the pools'
  token Secrets as the inventory gives them
  (``gitlab_runner/token_secrets.py``);
- ``arc_runners``: its pending changes, whose objects hold the scale sets'
  credentials Secrets (``arc_runners/credential_secrets.py``).

The result is the decision, which the caller registers as
``__gpuci_decision``: under each decided role's name what its later steps
read (``pending`` and the like), and ``decided``, the roles that decided.
In site.yml (``fleet``) one call decides for every role whose plan
converges and whose tags the run selects, and adds whether any has
something pending, what each will change, in words, and the releases and
reads of the fleet's converge. The decision holds Secrets: the caller shows
none of them, and keeps it out of Ansible's fact cache.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.credential_secrets import (
    arc_runners_credential_secrets,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.removals import gitlab_runner_removals
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.token_secrets import (
    gitlab_runner_token_secrets,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.node_labels import gpu_operator_node_labels
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.owner import gpu_operator_owner
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.pending_changes import pending_changes
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError, require_mapping

# The cluster roles in the order they converge, each with the tags its decision carries in
# site.yml (as each role's alone.yml tags its read and decision) and its name in words.
ROLES = {
    "gpu_operator": (("gpu_operator", "gpu_operator_preflight", "gpu_operator_install", "gpu_operator_verify"),
                     "GPU Operator"),
    "gitlab_runner": (("gitlab_runner", "gitlab_runner_install", "gitlab_runner_prune", "gitlab_runner_verify"),
                      "GitLab runner pools"),
    "arc_runners": (("arc_runners", "arc_runners_controller", "arc_runners_scale_sets", "arc_runners_verify"),
                    "ARC"),
}


def selected_by_tags(tags, run_tags=None, skip_tags=None):
    """Whether Ansible runs a task tagged ``tags`` under ``--tags run_tags`` and ``--skip-tags skip_tags``.

    Ansible's rule for tasks with tags, none of them ``always`` or ``never``:
    run when ``run_tags`` holds one of them, ``all`` or ``tagged``; skip when
    ``skip_tags`` does.
    """
    tags = set(tags) | {"all", "tagged"}
    return bool(tags & set(run_tags or ["all"])) and not tags & set(skip_tags or [])


class _Answers:
    """A role's answers from ``k8s_reads`` (``{key: {resources}}``): the resources of one read, [] when absent."""

    def __init__(self, groups, role):
        self._reads = require_mapping(groups.get(role) or {}, "read.%s" % role)

    def __call__(self, key):
        return list((self._reads.get(key) or {}).get("resources") or [])


def gpu_operator_decision(plan, found, check_mode):
    """The GPU Operator's ``{pending, node_patches}`` (its node label patches) and its refusal ('' for none)."""
    release = plan["release"]
    slicing = plan["time_slicing"]
    patches = gpu_operator_node_labels({
        "nodes": found("nodes"), "label_classes": slicing["label_classes"],
        "class_selectors": slicing["class_selectors"], "labels": plan["node_labels"], "release": release["name"]})
    configmaps = found("configmaps")
    removed_configmap = ["remove the time-slicing ConfigMap"] if not slicing["enabled"] and configmaps else []
    pending = pending_changes({
        "namespaces": [release["namespace"]], "namespace_labels": plan["namespace_labels"],
        "objects": plan["objects"], "create_only": plan["create_only"],
        "found": found("namespace") + configmaps + found("runtime_class"),
        "releases": [release], "release_records": found("release_records"),
        # Until the operator's Deployment exists, it is awaited by name.
        "awaited": found("deployment") or [{"kind": "Deployment", "metadata": {"name": plan["deployment"]}}],
        "steps": removed_configmap + [patch["summary"] for patch in patches],
        "readback": plan["readback_reads"], "check_mode": check_mode})
    refusal = gpu_operator_owner({"policies": found("policy"), "cluster_policy": plan["cluster_policy"],
                                  "release": release["name"], "namespace": release["namespace"]})
    return {"pending": pending, "node_patches": patches}, refusal


def gitlab_runner_decision(plan, found, pools, check_mode):
    """The GitLab runner role's ``{removals, pending}``: pending changes with state present only ({} otherwise).

    ``pools`` are the pools as the inventory wrote them: the tokens of those
    whose runner the role does not create in GitLab are theirs.
    """
    settings = plan["removal"]
    removals = gitlab_runner_removals({
        "pools": plan["pools"], "found": [account["metadata"] for account in found("accounts")],
        "state": settings["state"], "prune": settings["prune"], "namespace": settings["namespace"],
        "timeout": settings["timeout"], "labels": plan["labels"],
        "namespaces": [namespace["metadata"] for namespace in found("namespaces")]})
    decision = {"removals": removals, "pending": {}}
    if settings["state"] != "present":
        return decision, ""
    created = plan["created_pools"]
    token_secrets = gitlab_runner_token_secrets({
        "secrets": [secret for secret in plan["secrets"] if secret["pool"] not in created],
        "tokens": {pool.get("name"): pool.get("token") or "" for pool in pools}})
    decision["pending"] = pending_changes({
        "namespaces": plan["namespaces"], "namespace_labels": plan["labels"],
        "objects": plan["access"] + token_secrets,
        "found": found("namespaces") + found("accounts") + found("roles") + found("role_bindings") + found("secrets"),
        "releases": plan["releases"], "release_records": found("release_records"), "awaited": found("managers"),
        # Runners the role creates in GitLab are checked with GitLab on every run.
        "steps": ["remove pool " + name for name in removals["existing"]]
        + ["delete unused namespace " + name for name in removals["unused_namespaces"]]
        + ["create or find in GitLab the runner of pool " + name for name in created],
        "readback": plan["readback_reads"], "check_mode": check_mode})
    return decision, ""


def arc_runners_decision(plan, found, scale_sets, check_mode):
    """ARC's ``{pending}``; ``scale_sets`` as the inventory wrote them (their credentials)."""
    controller = [plan["controller"]] if plan["controller"] else []
    credentials = arc_runners_credential_secrets({"secrets": plan["secrets"], "scale_sets": scale_sets})
    pending = pending_changes({
        "namespaces": plan["namespaces"], "namespace_labels": plan["namespace_labels"],
        "objects": plan["configmaps"] + credentials,
        "found": found("namespaces") + found("secrets") + found("configmaps"),
        # The removed scale sets' releases are pending until they are gone.
        "releases": controller + plan["releases"] + plan["removals"], "release_records": found("release_records"),
        "apply_releases": controller + plan["releases"], "crds_from": plan["controller"],
        "readback": plan["readback_reads"], "check_mode": check_mode})
    return {"pending": pending}, ""


def _decision(role, plan, found, entry, check_mode):
    """One role's ``(decision, refusal)``; ``entry`` is its entry of ``roles`` (the inventory's pools or scale sets)."""
    if role == "gpu_operator":
        return gpu_operator_decision(plan, found, check_mode)
    if role == "gitlab_runner":
        return gitlab_runner_decision(plan, found, entry.get("pools") or [], check_mode)
    return arc_runners_decision(plan, found, entry.get("scale_sets") or [], check_mode)


def fleet_decide(roles, read, check_mode=False, fleet=False, run_tags=None, skip_tags=None):
    """``(decision, refusals)``: every decided role's decision by name, and why the run must stop (none: []).

    ``roles`` maps a role to ``{plan}`` and, for gitlab_runner, ``pools``,
    for arc_runners, ``scale_sets`` (the inventory's, with their secrets);
    ``read`` holds ``k8s_reads``' answers by role. With ``fleet`` only the
    roles whose plan converges and whose tags ``run_tags`` and
    ``skip_tags`` select decide, and the decision says too whether any
    found something pending, what each will change and what the fleet's
    converge applies and reads back (_fleet_summary). ``decided`` names
    the roles that decided, in their order.
    """
    require_mapping(roles, "roles")
    require_mapping(read, "read")
    unknown = sorted(set(roles) - set(ROLES))
    if unknown:
        raise ValidationError("roles", "no decision for %s; the cluster roles are %s" % (", ".join(unknown), ", ".join(ROLES)))
    decision, refusals, decided = {}, [], []
    for role, (tags, _title) in ROLES.items():
        if role not in roles:
            continue
        entry = require_mapping(roles[role], "roles.%s" % role)
        plan = require_mapping(entry.get("plan"), "roles.%s.plan" % role)
        if fleet and not (plan.get("converges") and selected_by_tags(tags, run_tags, skip_tags)):
            continue
        decision[role], refusal = _decision(role, plan, _Answers(read, role), entry, check_mode)
        decided.append(role)
        if refusal:
            refusals.append(refusal)
    decision["decided"] = decided
    if fleet:
        decision.update(_fleet_summary(decision))
    return decision, refusals


def _fleet_summary(decision):
    """``{pending, summary, releases, readback}``: whether a role that decided (``decision["decided"]``) found its
    plan not in place, each one's pending changes in words, and what the fleet's converge applies of the releases
    and reads back: every decided role's, in the roles' order (empty for a settled role)."""
    pendings = [(role, decision[role]["pending"]) for role in decision["decided"]]
    return {"pending": any(not pending["settled"] for _role, pending in pendings),
            "summary": ["%s: %s" % (ROLES[role][1], pending["summary"]) for role, pending in pendings],
            "releases": [release for _role, pending in pendings for release in pending["apply_releases"]],
            "readback": [read for _role, pending in pendings for read in pending["readback"]]}
