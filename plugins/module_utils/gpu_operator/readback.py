# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gpu_operator role's read-back: does the ClusterPolicy carry the release's settings?

The operator turns the release's values into its one ClusterPolicy; the
operands it starts follow that object, not the values. A policy changed
outside Helm, or a chart that no longer maps a value, shows here. All
problems are returned at once; ``[]`` means verified.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    child,
    object_list,
    reject_unknown_keys,
    require_mapping,
)

INPUT_KEYS = frozenset(("values", "cluster_policy", "policies"))
# The settings the role chooses that the ClusterPolicy must carry, as paths in
# both the release's values and the policy's spec.
SETTINGS = (("driver", "enabled"), ("toolkit", "enabled"), ("cdi", "enabled"), ("mig", "strategy"))


def gpu_operator_readback(spec, path="readback"):
    """Problems of the read-back; ``[]`` when the one ClusterPolicy carries the chosen settings.

    ``spec`` holds ``values`` (the plan's release values), ``cluster_policy``
    (its name) and ``policies`` (ClusterPolicy objects as ``k8s_reads``
    returns them).
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    values = require_mapping(spec.get("values"), child(path, "values"))
    policies = object_list(spec.get("policies"), child(path, "policies"))
    if len(policies) != 1:
        return ["expected one ClusterPolicy (%s); found %d" % (spec.get("cluster_policy"), len(policies))]
    live = policies[0].get("spec") or {}
    differing = ["%s.%s is %s, the release's %s" % (section, key, _at(live, section, key), _at(values, section, key))
                 for section, key in SETTINGS if _at(live, section, key) != _at(values, section, key)]
    if differing:
        return ["ClusterPolicy %s does not carry the chosen settings: %s"
                % ((policies[0].get("metadata") or {}).get("name"), "; ".join(differing))]
    return []


def _at(document, section, key):
    return (document.get(section) or {}).get(key)
