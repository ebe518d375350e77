# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gpu_operator role's read-back: does the operator's one CR carry the release's settings?

The operator turns the release's values into its one ClusterPolicy (the
device plugin's stack) or, with ``gpu_operator_gpu_allocation: dra``, its
one GPUCluster (NVIDIA's DRA driver), which the values say
(``gpuCluster.deployCR``); the operands it starts follow that object, not
the values. A CR changed outside Helm, a chart that no longer maps a value,
or a ClusterPolicy beside the GPUCluster shows here. All problems are
returned at once; ``[]`` means verified.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    child,
    object_list,
    reject_unknown_keys,
    require_mapping,
)

INPUT_KEYS = frozenset(("values", "cluster_policy", "policies", "gpu_clusters"))
# The settings the role chooses that the ClusterPolicy must carry, as paths in
# both the release's values and the policy's spec.
SETTINGS = (("driver", "enabled"), ("toolkit", "enabled"), ("cdi", "enabled"), ("mig", "strategy"))
# The same for the GPUCluster: those the values hold (the DRA driver's version only when the role sets it).
GPU_CLUSTER_SETTINGS = (("draDriver", "version"), ("dcgmExporter", "enabled"))


def gpu_operator_readback(spec, path="readback"):
    """Problems of the read-back; ``[]`` when the operator's one CR carries the chosen settings.

    ``spec`` holds ``values`` (the plan's release values), ``cluster_policy``
    (its name), ``policies`` and ``gpu_clusters`` (ClusterPolicy and
    GPUCluster objects as ``k8s_reads`` returns them; ``gpu_clusters`` is
    read only with DRA).
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    values = require_mapping(spec.get("values"), child(path, "values"))
    policies = object_list(spec.get("policies"), child(path, "policies"))
    if (values.get("gpuCluster") or {}).get("deployCR"):
        return _gpu_cluster_readback(values, policies, object_list(spec.get("gpu_clusters"), child(path, "gpu_clusters")))
    if len(policies) != 1:
        return ["expected one ClusterPolicy (%s); found %d" % (spec.get("cluster_policy"), len(policies))]
    return _differing("ClusterPolicy", policies[0], values, SETTINGS)


def _gpu_cluster_readback(values, policies, clusters):
    problems = ["expected no ClusterPolicy beside the GPUCluster (gpu_operator_gpu_allocation: dra); found %s"
                % ", ".join(str((policy.get("metadata") or {}).get("name")) for policy in policies)] if policies else []
    if len(clusters) != 1:
        return problems + ["expected one GPUCluster; found %d" % len(clusters)]
    chosen = tuple(setting for setting in GPU_CLUSTER_SETTINGS if _at(values, *setting) is not None)
    return problems + _differing("GPUCluster", clusters[0], values, chosen)


def _differing(kind, live_object, values, settings):
    live = live_object.get("spec") or {}
    differing = ["%s.%s is %s, the release's %s" % (section, key, _at(live, section, key), _at(values, section, key))
                 for section, key in settings if _at(live, section, key) != _at(values, section, key)]
    if differing:
        return ["%s %s does not carry the chosen settings: %s"
                % (kind, (live_object.get("metadata") or {}).get("name"), "; ".join(differing))]
    return []


def _at(document, section, key):
    return (document.get(section) or {}).get(key)
