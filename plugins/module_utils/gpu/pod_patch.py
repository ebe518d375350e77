# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU pod patch: what a job pod needs to run on a GPU class's nodes.

The patch is a strategic-merge patch of a PodSpec (no ``spec:`` wrapper).
Its parts are also exposed one by one, because GitLab and ARC place them
differently: GitLab has native keys for placement, and in ARC's kubernetes
mode the GPU belongs to the job pod, not the runner pod.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import merged_classes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import claim_template_name, container_claims, pod_resource_claims
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.request import cuda_runtime_class, resolve_gpu_request
from ansible_collections.gpuci.runners.plugins.module_utils.common.pool_keys import (
    POD_PATCH_KEYS,
    POOL_KEYS_OWNED_BY_CALLERS,
    RENAMED_POOL_KEYS,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    optional_str,
    reject_unknown_keys,
    require_mapping,
)

DEFAULT_CONTAINER = "build"
DRI_VOLUME = {"name": "dev-dri", "hostPath": {"path": "/dev/dri", "type": "Directory"}}
DRI_MOUNT = {"name": "dev-dri", "mountPath": "/dev/dri"}


def gpu_pod_patch(pool, gpu_classes=None, path="pool", runtime_class=None):
    """Return the strategic-merge PodSpec patch for ``pool`` (see docs/filters.md).

    ``runtime_class`` is the RuntimeClass of gpu_access cuda when the pool names
    none (None: the GPU Operator's default, ``""``: none).
    """
    require_mapping(pool, path)
    reject_unknown_keys(pool, POD_PATCH_KEYS | POOL_KEYS_OWNED_BY_CALLERS, path, RENAMED_POOL_KEYS)
    if pool.get("gpu_class") is None:
        raise ValidationError(path + ".gpu_class", "is required")
    container = optional_str(pool, "container", path, default=DEFAULT_CONTAINER)
    request = resolve_gpu_request(
        pool, merged_classes(gpu_classes), path, cuda_runtime_class(runtime_class, "runtime_class")
    )
    template = None
    if request.claim is not None:
        template = claim_template_name(optional_str(pool, "name", path, default=str(pool["gpu_class"])))
    return build_pod_patch(request, container, template)


def build_pod_patch(request, container, claim_template=None):
    """The whole patch for a resolved request, GPU on ``container``.

    ``claim_template`` names the ResourceClaimTemplate of a DRA request.
    """
    patch = placement(request)
    patch.update(pod_claims(request, claim_template))
    patch["containers"] = [container_patch(request, container)]
    volumes = pod_volumes(request)
    if volumes:
        patch["volumes"] = volumes
    return patch


def pod_claims(request, claim_template):
    """Pod-level ``resourceClaims`` of a DRA request (nothing for others).

    Only the containers that name the claim get its devices (container_patch
    names it on the GPU container), so the other containers of the pod, such
    as GitLab's helper or ARC's sidecars, get none.
    """
    if request.claim is None:
        return {}
    if not claim_template:
        raise ValueError("a DRA request needs the name of its ResourceClaimTemplate")
    return {"resourceClaims": pod_resource_claims(claim_template)}


def placement(request):
    """Pod-level keys that put the pod on the class's nodes."""
    result = {}
    if request.node_selector:
        result["nodeSelector"] = dict(request.node_selector)
    if request.tolerations:
        result["tolerations"] = [dict(t) for t in request.tolerations]
    if request.runtime_class:
        result["runtimeClassName"] = request.runtime_class
    return result


def container_patch(request, name):
    """The named container's share: GPU resources (a device plugin's, or the DRA claim) or the /dev/dri mount."""
    result = {"name": name}
    if request.claim is not None:
        result["resources"] = {"claims": container_claims()}
    if request.resource:
        quantity = str(request.count)  # quantities are strings in the API
        result["resources"] = {
            "requests": {request.resource: quantity},
            "limits": {request.resource: quantity},
        }
    if request.gpu_access == "dri":
        result["volumeMounts"] = [dict(DRI_MOUNT)]
    if request.privileged:
        result["securityContext"] = {"privileged": True}
    return result


def pod_volumes(request):
    if request.gpu_access == "dri":
        return [{"name": DRI_VOLUME["name"], "hostPath": dict(DRI_VOLUME["hostPath"])}]
    return []
