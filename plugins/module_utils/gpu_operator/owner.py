# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One GPU Operator per cluster, handing out GPUs one way: may the role's release go on?

The operator's ClusterPolicy, GPUCluster, ClusterRole and CRDs have fixed
names, so a second release in another namespace (or under another name) can
only fail half-way through its install. Helm marks what it owns with the
``meta.helm.sh/release-name`` and ``-namespace`` annotations; an object
without them was made outside Helm. Either CR of another owner is refused.

The chart deploys a ClusterPolicy (the device plugin's stack) or a
GPUCluster (NVIDIA's DRA driver), never both, and the operator does not run
both. The release's own CR of the other way (``gpu_operator_gpu_allocation``
changed on a release that runs) is refused as well, with the steps to move,
rather than moved by the converge:

- the chart does only half of the move on upgrade: from ``dra`` to
  ``device_plugin`` it keeps the GPUCluster (``helm.sh/resource-policy:
  keep``; its cleanup hook, which deletes it and waits for the operator to
  drain its operands, runs only before an uninstall), so both CRs would
  stay; from ``device_plugin`` to ``dra`` it deletes the ClusterPolicy only
  where ``operator.cleanupCRD`` did not mark it keep as well;
- either way every GPU of the cluster leaves the running jobs until the
  other stack is up, and the pools must change their own ``gpu_allocation``
  in the same step: a decision about the whole fleet's jobs, not a rerun's
  side effect.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    child,
    object_list,
    optional_choice,
    reject_unknown_keys,
    require_mapping,
    required_str,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import DEVICE_PLUGIN, DRA, GPU_ALLOCATIONS

INPUT_KEYS = frozenset(("policies", "gpu_clusters", "cluster_policy", "gpu_allocation", "release", "namespace"))
RELEASE_ANNOTATION = "meta.helm.sh/release-name"
NAMESPACE_ANNOTATION = "meta.helm.sh/release-namespace"
NOT_HELM = "(not Helm)"


def gpu_operator_owner(spec, path="gpu_operator_owner"):
    """``""`` when the role's release may own the cluster's GPU Operator, else why not (the refusal).

    ``spec`` holds ``policies`` and ``gpu_clusters`` (the ClusterPolicy and
    GPUCluster objects read, none on a cluster without the operator),
    ``cluster_policy`` (the policy's name), ``gpu_allocation`` (the plan's,
    ``device_plugin`` when not given), ``release`` and ``namespace`` (the
    role's release).
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    policies = object_list(spec.get("policies"), child(path, "policies"))
    clusters = object_list(spec.get("gpu_clusters"), child(path, "gpu_clusters"))
    release, namespace = required_str(spec, "release", path), required_str(spec, "namespace", path)
    allocation = optional_choice(spec, "gpu_allocation", path, GPU_ALLOCATIONS, DEVICE_PLUGIN)
    for kind, objects in (("ClusterPolicy", policies), ("GPUCluster", clusters)):
        for found in objects:
            owner = _foreign_owner(found, release, namespace)
            if owner:
                return ("The cluster already runs a GPU Operator (%s %s belongs to Helm release %s in namespace %s); "
                        "there can be only one per cluster. Set gpu_operator_release_name / gpu_operator_namespace "
                        "to that release, or remove it first."
                        % (kind, _name(found, spec.get("cluster_policy")), owner[0], owner[1]))
    if allocation == DRA and policies:
        return ("gpu_operator_gpu_allocation is dra, but this release hands out GPUs through the device plugin now "
                "(ClusterPolicy %s); the role does not switch a running release (the chart would leave both CRs, or "
                "take every GPU from the running jobs at once). To move: stop the GPU jobs (scale the pools to zero), "
                "then either delete the ClusterPolicy (kubectl delete clusterpolicies.nvidia.com %s; the operator "
                "removes the device plugin and its other operands) or uninstall with gpu_operator_state: absent, and "
                "converge again with gpu_operator_gpu_allocation: dra and the pools' gpu_allocation: dra."
                % (_name(policies[0], spec.get("cluster_policy")), _name(policies[0], spec.get("cluster_policy"))))
    if allocation == DEVICE_PLUGIN and clusters:
        name = _name(clusters[0], "")
        return ("gpu_operator_gpu_allocation is device_plugin, but this release hands out GPUs through NVIDIA's DRA "
                "driver now (GPUCluster %s); the role does not switch a running release (the chart keeps the "
                "GPUCluster on upgrade, so both CRs would stay). To move: stop the GPU jobs (scale the pools to "
                "zero), then either delete the GPUCluster while the operator runs (kubectl delete "
                "gpuclusters.nvidia.com %s --wait; the operator drains the DRA driver first) or uninstall with "
                "gpu_operator_state: absent, and converge again with gpu_operator_gpu_allocation: device_plugin and "
                "the pools' gpu_allocation: device_plugin." % (name, name))
    return ""


def _foreign_owner(found, release, namespace):
    """``(release, namespace)`` of the Helm release that owns ``found`` when it is not ours (NOT_HELM for an object
    made outside Helm; "" shown as "(none)"), else None."""
    annotations = (found.get("metadata") or {}).get("annotations") or {}
    owner_release = annotations.get(RELEASE_ANNOTATION, NOT_HELM)
    owner_namespace = annotations.get(NAMESPACE_ANNOTATION, NOT_HELM)
    if owner_release in ("", release) and owner_namespace in ("", namespace):
        return None
    return owner_release or "(none)", owner_namespace or "(none)"


def _name(found, default):
    return (found.get("metadata") or {}).get("name") or default
