# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One GPU Operator per cluster: does the ClusterPolicy the read found belong to another release?

The operator's ClusterPolicy, ClusterRole and CRDs have fixed names, so a
second release in another namespace (or under another name) can only fail
half-way through its install. Helm marks what it owns with the
``meta.helm.sh/release-name`` and ``-namespace`` annotations; a policy
without them was made outside Helm.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    child,
    object_list,
    reject_unknown_keys,
    require_mapping,
    required_str,
)

INPUT_KEYS = frozenset(("policies", "cluster_policy", "release", "namespace"))
RELEASE_ANNOTATION = "meta.helm.sh/release-name"
NAMESPACE_ANNOTATION = "meta.helm.sh/release-namespace"
NOT_HELM = "(not Helm)"


def gpu_operator_owner(spec, path="gpu_operator_owner"):
    """``""`` when the role's release may own the cluster's GPU Operator, else why not (the refusal).

    ``spec`` holds ``policies`` (the ClusterPolicy objects read, none on a
    cluster without the operator), ``cluster_policy`` (the policy's name),
    ``release`` and ``namespace`` (the role's release).
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    policies = object_list(spec.get("policies"), child(path, "policies"))
    release, namespace = required_str(spec, "release", path), required_str(spec, "namespace", path)
    if not policies:
        return ""
    annotations = (policies[0].get("metadata") or {}).get("annotations") or {}
    owner_release = annotations.get(RELEASE_ANNOTATION, NOT_HELM)
    owner_namespace = annotations.get(NAMESPACE_ANNOTATION, NOT_HELM)
    if owner_release in ("", release) and owner_namespace in ("", namespace):
        return ""
    return ("The cluster already runs a GPU Operator (ClusterPolicy %s belongs to Helm release %s in namespace %s); "
            "there can be only one per cluster. Set gpu_operator_release_name / gpu_operator_namespace to that "
            "release, or remove it first." % (spec.get("cluster_policy"), owner_release or "(none)",
                                              owner_namespace or "(none)"))
