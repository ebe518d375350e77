# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Turn the GPU part of a pool or scale set into one checked request.

Every builder (GitLab, ARC, the plain pod patch) starts here, so the rules
about classes, GPU access (``gpu_access``: cuda or dri), counts, MIG
profiles and how the GPU is allocated (``gpu_allocation``: the device plugin
or DRA) are written once.
"""

from __future__ import annotations

from collections import namedtuple

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import GPU_ACCESS_MODES, get_class, mig_resource
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import DEVICE_PLUGIN, DRA, GPU_ALLOCATIONS, device_claim
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.scheduling import check_tolerations, merge_tolerations
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    child,
    optional_bool,
    optional_choice,
    optional_int,
    optional_str,
    optional_str_map,
    type_name,
)

# The RuntimeClass the GPU Operator creates unless told otherwise
# (gpu_operator_runtime_class); gpu_access cuda uses it when nobody names one.
DEFAULT_RUNTIME_CLASS = "nvidia"

GpuRequest = namedtuple(
    "GpuRequest",
    [
        "gpu_class",  # class name, None for a CPU pool
        "gpu_access",  # "cuda", "dri", or None for a CPU pool
        "resource",  # device plugin resource to request, None if nothing is requested
        "count",  # how many of `resource`
        "node_selector",  # class selector with the pool's merged over it
        "tolerations",  # class tolerations, then the pool's, without duplicates
        "runtime_class",  # runtimeClassName, or None for none
        "privileged",
        "claim",  # the DRA DeviceClaim (gpu/dra.py) with gpu_allocation dra, else None
    ],
)


def cuda_runtime_class(value, path):
    """Check a builder's ``runtime_class`` argument: the RuntimeClass of gpu_access cuda where the pool names none.

    None means DEFAULT_RUNTIME_CLASS; ``""`` means no runtime class (a node
    whose default runtime is already NVIDIA's).
    """
    if value is None:
        return DEFAULT_RUNTIME_CLASS
    if not isinstance(value, str):
        raise ValidationError(path, 'must be a string ("" for none), not %s' % type_name(value), value)
    return str(value)


def resolve_gpu_request(pool, classes, path, runtime_class=DEFAULT_RUNTIME_CLASS):
    """Check the GPU keys of ``pool`` against the catalogue ``classes``.

    ``pool`` must already be known to be a mapping whose keys the caller has
    vetted. A pool without ``gpu_class`` is a CPU pool: it may still carry a
    node selector, tolerations, a runtime class and ``privileged``.
    ``runtime_class`` (checked with cuda_runtime_class) applies to gpu_access
    cuda when the pool names no ``runtime_class`` of its own.
    """
    pool_selector = optional_str_map(pool, "node_selector", path)
    pool_tolerations = check_tolerations(pool.get("tolerations"), child(path, "tolerations"))
    privileged = optional_bool(pool, "privileged", path)
    pool_runtime_class = optional_str(pool, "runtime_class", path, allow_empty=True)

    if pool.get("gpu_class") is None:
        for key in ("gpus", "mig_profile", "gpu_access", "gpu_allocation"):
            if pool.get(key) is not None:
                raise ValidationError(child(path, key), "needs gpu_class (a pool without gpu_class is a CPU pool)", pool[key])
        return GpuRequest(None, None, None, 0, pool_selector, pool_tolerations, pool_runtime_class or None, privileged,
                          None)

    class_name = pool["gpu_class"]
    gpu_class = get_class(classes, class_name, child(path, "gpu_class"))
    gpu_access = _resolve_gpu_access(pool, gpu_class, path)
    resource, count = _resolve_resource(pool, gpu_class, gpu_access, path)
    allocation = _resolve_allocation(pool, gpu_class, gpu_access, path)
    if allocation == DRA:
        return _dra_request(pool, gpu_class, count, pool_selector, pool_tolerations, pool_runtime_class, privileged, path)
    if pool_runtime_class is not None:
        pod_runtime_class = pool_runtime_class
    elif gpu_access == "cuda":
        pod_runtime_class = runtime_class
    else:
        pod_runtime_class = None  # gpu_access dri needs no GPU runtime unless the pool names one
    node_selector = dict(gpu_class["node_selector"])
    node_selector.update(pool_selector)
    return GpuRequest(
        str(class_name),
        gpu_access,
        resource,
        count,
        node_selector,
        merge_tolerations(gpu_class["tolerations"], pool_tolerations),
        pod_runtime_class or None,
        privileged,
        None,
    )


def _resolve_allocation(pool, gpu_class, gpu_access, path):
    allocation = optional_choice(pool, "gpu_allocation", path, GPU_ALLOCATIONS, DEVICE_PLUGIN)
    if allocation == DRA and gpu_access != "cuda":
        raise ValidationError(child(path, "gpu_allocation"), "DRA allocates GPUs for gpu_access cuda; gpu_access "
                              "%s mounts the host's render node and allocates nothing" % gpu_access, allocation)
    if allocation == DRA and gpu_class["dra_selector"] is None:
        raise ValidationError(child(path, "gpu_allocation"), "GPU class %s has neither product nor dra_selector, so "
                              "DRA cannot tell its GPUs from others; give the class one" % pool["gpu_class"],
                              allocation)
    return allocation


def _dra_request(pool, gpu_class, count, pool_selector, pool_tolerations, pool_runtime_class, privileged, path):
    """The request of a DRA pool: a claim instead of a device plugin resource.

    Placement stays the class's: the claim picks the devices, the node
    selector and tolerations keep the pod on the class's nodes as before
    (ARC's kubernetes mode needs its runner pod, which claims nothing, on
    the nodes its job pod can use). No runtime class unless the pool names
    one: the kubelet plugin hands the devices over as CDI devices, which
    containerd and CRI-O inject themselves.
    """
    claim = device_claim(gpu_class, count, optional_str(pool, "mig_profile", path))
    node_selector = dict(gpu_class["node_selector"])
    node_selector.update(pool_selector)
    return GpuRequest(
        str(pool["gpu_class"]),
        "cuda",
        None,
        claim.count,
        node_selector,
        merge_tolerations(gpu_class["tolerations"], pool_tolerations),
        pool_runtime_class or None,
        privileged,
        claim,
    )


def _resolve_gpu_access(pool, gpu_class, path):
    # A class that offers cuda defaults to it; a dri-only class to dri.
    default = "cuda" if "cuda" in gpu_class["gpu_access"] else gpu_class["gpu_access"][0]
    gpu_access = optional_choice(pool, "gpu_access", path, GPU_ACCESS_MODES, default)
    if gpu_access not in gpu_class["gpu_access"]:
        raise ValidationError(
            child(path, "gpu_access"),
            "GPU class %s serves only the gpu_access %s" % (pool["gpu_class"], ", ".join(gpu_class["gpu_access"])),
            gpu_access,
        )
    return gpu_access


def _resolve_resource(pool, gpu_class, gpu_access, path):
    """Return the resource name and count to request."""
    gpus_given = pool.get("gpus") is not None
    mig_profile = optional_str(pool, "mig_profile", path)
    if gpu_access == "dri":
        # gpu_access dri mounts the host's render node; it requests nothing.
        for key in ("gpus", "mig_profile"):
            if pool.get(key) is not None:
                raise ValidationError(child(path, key), "must be unset with gpu_access dri, which requests no GPU",
                                      pool[key])
        return None, 0
    if gpus_given and mig_profile is not None:
        raise ValidationError(child(path, "mig_profile"), "cannot be combined with gpus; set one of them", mig_profile)
    if mig_profile is not None:
        if mig_profile not in gpu_class["mig_profiles"]:
            offered = ", ".join(gpu_class["mig_profiles"]) or "none"
            raise ValidationError(
                child(path, "mig_profile"),
                "GPU class %s has no such MIG profile (it has: %s)" % (pool["gpu_class"], offered),
                mig_profile,
            )
        return mig_resource(mig_profile), 1
    return gpu_class["resource"], optional_int(pool, "gpus", path, default=1, minimum=1)
