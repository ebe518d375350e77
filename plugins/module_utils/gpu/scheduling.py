# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where job pods may run: tolerations and the CPU-only node affinity."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    child,
    item,
    optional_choice,
    optional_str,
    reject_unknown_keys,
    require_mapping,
    required_str,
    type_name,
)

TOLERATION_KEYS = frozenset(("key", "operator", "value", "effect"))
TOLERATION_OPERATORS = ("Equal", "Exists")
TOLERATION_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")

# Node labels that mark accelerator nodes; CPU jobs must stay off them.
GPU_NODE_LABEL = "nvidia.com/gpu.present"
DRI_NODE_LABEL = "gpuci.runners/dri"


def check_toleration(value, path):
    """Validate one toleration and return it with an explicit operator.

    A key is required (GitLab's node_tolerations map cannot say "tolerate
    everything"); the operator defaults to Equal when a value is given.
    """
    require_mapping(value, path)
    reject_unknown_keys(value, TOLERATION_KEYS, path)
    key = required_str(value, "key", path)
    toleration_value = optional_str(value, "value", path)
    default_operator = "Exists" if toleration_value is None else "Equal"
    operator = optional_choice(value, "operator", path, TOLERATION_OPERATORS, default_operator)
    if operator == "Exists" and toleration_value is not None:
        raise ValidationError(child(path, "value"), "must be empty when operator is Exists", toleration_value)
    if operator == "Equal" and toleration_value is None:
        raise ValidationError(child(path, "value"), "is required when operator is Equal")
    effect = optional_choice(value, "effect", path, TOLERATION_EFFECTS)
    result = {"key": key, "operator": operator}
    if toleration_value is not None:
        result["value"] = toleration_value
    if effect is not None:
        result["effect"] = effect
    return result


def check_tolerations(value, path):
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise ValidationError(path, "must be a list of tolerations, not %s" % type_name(value), value)
    return [check_toleration(element, item(path, index)) for index, element in enumerate(value)]


def merge_tolerations(*groups):
    """Concatenate toleration lists in order, dropping exact duplicates."""
    merged = []
    for group in groups:
        for toleration in group:
            if toleration not in merged:
                merged.append(dict(toleration))
    return merged


def cpu_only_affinity():
    """A required node affinity that keeps a pod off GPU and /dev/dri nodes.

    NotIn also matches nodes without the label, so ordinary nodes qualify.
    """
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {
                        "matchExpressions": [
                            {"key": GPU_NODE_LABEL, "operator": "NotIn", "values": ["true"]},
                            {"key": DRI_NODE_LABEL, "operator": "NotIn", "values": ["true"]},
                        ]
                    }
                ]
            }
        }
    }
