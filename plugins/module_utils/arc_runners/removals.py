# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the arc_runners role prunes after a converge: our objects no present scale set uses any more.

A scale set's credentials Secret, hook template ConfigMap and DRA claim
template carry our scale set label (``scale_set_label``). After the releases
point elsewhere, those of a present scale set that it no longer uses go: a
token replaced by ``github_config_secret``, kubernetes container mode left,
``gpu_allocation: dra`` left, a namespace changed. Objects labelled with a scale set that is not present are left to
that scale set's removal (``plan["removals"]``). The objects are those of the
one read, made before this run changed anything; those this run made are in
use, so none is missed.

Only kinds, names and namespaces leave here (the delete needs no more), never
a Secret's data.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.ownership_labels import set_selector
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    child,
    object_list,
    require_mapping,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra_pools import stale_claim_templates

# Every namespace carries its name as this label (Kubernetes 1.21+).
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def arc_runners_removals(spec, path="arc_runners_removals"):
    """``{"secrets", "configmaps"}``: the objects to delete, each ``{apiVersion, kind, metadata: {name, namespace}}``.

    ``spec`` holds ``by_scale_set`` (the plan's: each present scale set's
    ``namespace``, ``secret``, ``owns_secret`` and ``hook_configmap``),
    ``scale_set_label`` (the plan's), and ``secrets`` and ``configmaps``
    (our objects as the read found them).
    """
    require_mapping(spec, path)
    planned = require_mapping(spec.get("by_scale_set") or {}, child(path, "by_scale_set"))
    label = spec["scale_set_label"]

    def in_use(kind, metadata, entry):
        if metadata.get("namespace") != entry["namespace"]:
            return False
        if kind == "Secret":
            return bool(entry["owns_secret"]) and metadata.get("name") == entry["secret"]
        return entry.get("hook_configmap") is not None and metadata.get("name") == entry["hook_configmap"]

    def unused(objects, kind, key):
        doomed = []
        for obj in object_list(objects, child(path, key)):
            metadata = obj.get("metadata") or {}
            entry = planned.get((metadata.get("labels") or {}).get(label))
            if entry is not None and not in_use(kind, metadata, entry):
                doomed.append({"apiVersion": "v1", "kind": kind,
                               "metadata": {"name": metadata["name"], "namespace": metadata["namespace"]}})
        return doomed

    return {"secrets": unused(spec.get("secrets"), "Secret", "secrets"),
            "configmaps": unused(spec.get("configmaps"), "ConfigMap", "configmaps")}


def arc_runners_stale_claim_templates(plan, found):
    """The ResourceClaimTemplates of present scale sets that they no longer use, as deletions.

    ``plan`` is the role's (``by_scale_set``, ``scale_set_label``,
    ``claim_templates``); ``found`` our templates as the read found them. A
    template labelled with a scale set that is not present stays: a removed
    one's goes with it (scale_sets_absent.yml), an undeclared one's runners
    may still use it.
    """
    label = plan["scale_set_label"]
    present = [obj for obj in object_list(found, "claim_templates")
               if ((obj.get("metadata") or {}).get("labels") or {}).get(label) in plan["by_scale_set"]]
    return stale_claim_templates(present, plan["claim_templates"], label)


def arc_runners_absent(spec, path="arc_runners_absent"):
    """What ``arc_runners_state: absent`` removes besides the releases: ``{"namespace_selectors", "runner_sets"}``.

    ``spec`` holds ``plan`` (the role's: its ``scale_sets`` and
    ``namespace_selectors``), ``controller_namespace`` and, once read,
    ``runner_sets`` (the AutoscalingRunnerSets left in the cluster).
    ``namespace_selectors`` select the namespaces the role created (its
    labels) among those it uses (the controller's and the scale sets'), by
    name; ``runner_sets`` names those left, ``namespace/name``, in words:
    while there are any, ARC's CRDs stay.
    """
    require_mapping(spec, path)
    plan = require_mapping(spec.get("plan"), child(path, "plan"))
    used = list(dict.fromkeys([spec["controller_namespace"]] + [s["namespace"] for s in plan.get("scale_sets") or []]))
    left = object_list(spec.get("runner_sets"), child(path, "runner_sets"))
    return {"namespace_selectors": list(plan["namespace_selectors"]) + [set_selector(NAMESPACE_NAME_LABEL, used)],
            "runner_sets": ", ".join("%s/%s" % ((obj.get("metadata") or {}).get("namespace"),
                                                (obj.get("metadata") or {}).get("name")) for obj in left)}


# Kinds that carry ARC cleanup finalizers in a scale set's namespace: the
# chart's RBAC objects and what the controller makes from the runner set.
FINALIZED_KINDS = (("runner_sets", "actions.github.com/v1alpha1", "AutoscalingRunnerSet"),
                   ("ephemeral_runner_sets", "actions.github.com/v1alpha1", "EphemeralRunnerSet"),
                   ("ephemeral_runners", "actions.github.com/v1alpha1", "EphemeralRunner"),
                   ("role_bindings", "rbac.authorization.k8s.io/v1", "RoleBinding"),
                   ("roles", "rbac.authorization.k8s.io/v1", "Role"),
                   ("service_accounts", "v1", "ServiceAccount"))


def arc_runners_leftovers(spec, path="arc_runners_leftovers"):
    """The removed scale sets' leftovers: ``{"reads", "objects"}``.

    ``spec`` holds ``scale_set_name_label`` (the plan's), ``scale_sets``
    (the removed ones: their ``name``) and, once read, ``reads`` (the
    ``reads`` of the ``k8s_reads`` answer). ``reads`` find every object of a
    kind that carries ARC's cleanup finalizers labelled with one of those
    names, as ``k8s_reads`` takes them; ``objects`` are what they found, in
    one list (``arc_runners_finalizer_patches`` picks those to release).
    """
    require_mapping(spec, path)
    names = [entry["name"] for entry in object_list(spec.get("scale_sets"), child(path, "scale_sets"))]
    selectors = [set_selector(spec["scale_set_name_label"], names)]
    answers = require_mapping(spec.get("reads") or {}, child(path, "reads"))
    return {"reads": [{"key": key, "api_version": api_version, "kind": kind, "label_selectors": selectors}
                      for key, api_version, kind in FINALIZED_KINDS] if names else [],
            "objects": [obj for key in answers
                        for obj in object_list((answers[key] or {}).get("resources"), child(child(path, "reads"), key))]}
