# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU class catalogue: which nodes a class of GPU lives on and what it offers.

A class is a plain dict (see ``CLASS_KEYS``). The built-in classes carry
only the facts about the hardware; ``merged_classes`` lays the inventory's
``gpu_classes`` over them and fills the derived keys (node selector from the
product label, the device plugin resource, the ``nvidia.com/gpu`` toleration).

A class's ``gpu_access`` lists how pods can reach its GPUs: ``cuda`` (a
device plugin request) and/or ``dri`` (the host's ``/dev/dri`` render node).
A ``cuda`` class is also reachable through Dynamic Resource Allocation: its
``dra_selector`` (a CEL expression on the attributes NVIDIA's DRA driver
publishes) picks its GPUs, by default from its product (gpu/dra.py).
"""

from __future__ import annotations

import copy

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import class_selector
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.scheduling import DRI_NODE_LABEL, check_tolerations
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    check_int,
    check_str_list,
    check_str_map,
    child,
    item,
    plain,
    reject_unknown_keys,
    require_mapping,
    type_name,
)

GPU_ACCESS_MODES = ("cuda", "dri")
CLASS_KEYS = frozenset(
    ("product", "memory_mib", "resource", "mig_profiles", "gpu_access", "node_selector", "tolerations", "dra_selector")
)
# Class keys that were renamed, with their names now: refused with an error
# that names the new key (``lanes`` are the canary's).
RENAMED_CLASS_KEYS = {"lanes": "gpu_access"}

# Labels set by GPU Feature Discovery (part of the NVIDIA device plugin).
PRODUCT_LABEL = "nvidia.com/gpu.product"
MEMORY_LABEL = "nvidia.com/gpu.memory"
GPU_RESOURCE = "nvidia.com/gpu"
# The GPU Operator taints nothing itself, but GPU node pools are commonly
# tainted nvidia.com/gpu=present:NoSchedule (as AKS and GKE do).
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}

_A100_80GB_MIG = ["1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"]
_A100_40GB_MIG = ["1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"]
_H200_141GB_MIG = ["1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"]

# Product names are the GPU's name with spaces replaced by dashes, as GFD
# writes them; memory is the GFD `nvidia.com/gpu.memory` value in MiB.
_BUILTIN_CLASSES = {
    "l40s": {"product": "NVIDIA-L40S", "memory_mib": 46068, "mig_profiles": [], "gpu_access": ["cuda"]},
    "a100": {"product": "NVIDIA-A100-SXM4-80GB", "memory_mib": 81920, "mig_profiles": _A100_80GB_MIG, "gpu_access": ["cuda"]},
    "a100-40gb": {"product": "NVIDIA-A100-SXM4-40GB", "memory_mib": 40960, "mig_profiles": _A100_40GB_MIG, "gpu_access": ["cuda"]},
    "a10": {"product": "NVIDIA-A10", "memory_mib": 23028, "mig_profiles": [], "gpu_access": ["cuda"]},
    "h100": {"product": "NVIDIA-H100-80GB-HBM3", "memory_mib": 81559, "mig_profiles": _A100_80GB_MIG, "gpu_access": ["cuda"]},
    "h200": {"product": "NVIDIA-H200", "memory_mib": 143771, "mig_profiles": _H200_141GB_MIG, "gpu_access": ["cuda"]},
    # A host with a render node (/dev/dri), labelled and tainted by the operator.
    "dri": {
        "product": None,
        "memory_mib": None,
        "mig_profiles": [],
        "gpu_access": ["dri"],
        "node_selector": {DRI_NODE_LABEL: "true"},
        "tolerations": [{"key": DRI_NODE_LABEL, "operator": "Exists", "effect": "NoSchedule"}],
    },
}


def builtin_class_names():
    return sorted(_BUILTIN_CLASSES)


def builtin_classes_of_product(product):
    """The names of the built-in classes whose GPU is ``product`` (GFD's product label), sorted."""
    return sorted(name for name, entry in _BUILTIN_CLASSES.items() if entry["product"] == product)


def mig_resource(profile):
    """The device plugin resource of a MIG profile under the ``mixed`` strategy."""
    return "nvidia.com/mig-%s" % profile


def merged_classes(user_classes=None, path="gpu_classes"):
    """Return the catalogue with the user's classes laid over the built-ins.

    A user entry replaces the keys it names (a key set to null is unset, so
    its default applies again); an entry with a new name adds a class.
    Every class of the result is complete and valid.
    """
    overrides = {} if user_classes is None else require_mapping(user_classes, path)
    raw = copy.deepcopy(_BUILTIN_CLASSES)
    for name in sorted(overrides, key=str):
        if not isinstance(name, str) or not name:
            raise ValidationError(path, "class names must be non-empty strings", name)
        entry_path = child(path, name)
        entry = require_mapping(overrides[name], entry_path)
        reject_unknown_keys(entry, CLASS_KEYS, entry_path, RENAMED_CLASS_KEYS)
        merged = raw.get(name, {})
        for key, value in entry.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = plain(value)
        raw[name] = merged
    return dict((name, _complete_class(raw[name], child(path, name))) for name in sorted(raw))


def get_class(classes, name, path):
    """Look up a class by name; the error lists the known ones."""
    if not isinstance(name, str):
        raise ValidationError(path, "must be a string naming a GPU class, not %s" % type_name(name), name)
    if name not in classes:
        raise ValidationError(path, "unknown GPU class; known classes: %s" % ", ".join(sorted(classes)), name)
    return classes[name]


def _complete_class(raw, path):
    gpu_access = _check_gpu_access(raw.get("gpu_access"), child(path, "gpu_access"))
    product = raw.get("product")
    if product is not None and (not isinstance(product, str) or not product):
        raise ValidationError(child(path, "product"), "must be a non-empty string", product)
    memory_mib = raw.get("memory_mib")
    if memory_mib is not None:
        check_int(memory_mib, child(path, "memory_mib"), minimum=1)

    if raw.get("node_selector") is not None:
        node_selector = check_str_map(raw["node_selector"], child(path, "node_selector"))
    elif product is not None:
        node_selector = {PRODUCT_LABEL: product}
    else:
        node_selector = {}
    if not node_selector:
        # Without a selector the class's pods could land on any node.
        raise ValidationError(path, "needs a product or a non-empty node_selector")

    resource = raw.get("resource")
    if resource is None and "cuda" in gpu_access:
        resource = GPU_RESOURCE
    if resource is not None and (not isinstance(resource, str) or not resource):
        raise ValidationError(child(path, "resource"), "must be a non-empty string", resource)

    if raw.get("tolerations") is not None:
        tolerations = check_tolerations(raw["tolerations"], child(path, "tolerations"))
    elif "cuda" in gpu_access:
        tolerations = [dict(GPU_TOLERATION)]
    else:
        tolerations = []

    mig_profiles = raw.get("mig_profiles")
    mig_profiles = [] if mig_profiles is None else check_str_list(mig_profiles, child(path, "mig_profiles"))

    dra_selector = raw.get("dra_selector")
    if dra_selector is not None and (not isinstance(dra_selector, str) or not dra_selector.strip()):
        raise ValidationError(child(path, "dra_selector"), "must be a non-empty CEL expression", dra_selector)
    if "cuda" in gpu_access:
        dra_selector = class_selector({"dra_selector": dra_selector, "product": product})
    elif dra_selector is not None:
        raise ValidationError(child(path, "dra_selector"), "is for classes with gpu_access cuda: DRA claims "
                              "GPUs, not /dev/dri render nodes", dra_selector)

    return {
        "product": product,
        "memory_mib": memory_mib,
        "resource": resource,
        "mig_profiles": mig_profiles,
        "gpu_access": gpu_access,
        "node_selector": node_selector,
        "tolerations": tolerations,
        "dra_selector": dra_selector,
    }


def _check_gpu_access(value, path):
    if value is None:
        raise ValidationError(path, "is required (a list of %s)" % ", ".join(GPU_ACCESS_MODES))
    modes = check_str_list(value, path)
    if not modes:
        raise ValidationError(path, "must name at least one gpu_access mode", value)
    for index, mode in enumerate(modes):
        if mode not in GPU_ACCESS_MODES:
            raise ValidationError(item(path, index), "unknown gpu_access mode; known modes: %s"
                                  % ", ".join(GPU_ACCESS_MODES), mode)
    return modes
