# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The DRA side of the runner roles' pools and scale sets: their claim templates, and what the cluster must offer.

A pool or scale set with ``gpu_allocation: dra`` has one ResourceClaimTemplate
in its job namespace (gpu/dra.py ``claim_template``), which the roles apply,
prune when the entry stops asking for DRA, and delete with the entry. Before
any of it, the cluster must serve ``resource.k8s.io/v1`` (Kubernetes 1.34 or
later) and hold the DeviceClass each claim names; otherwise job pods would
wait for a claim nobody can allocate, so the converge is refused, naming
the entries. A node whose GPUs are handed out both by a device plugin
(``nvidia.com/gpu`` allocatable) and by NVIDIA's DRA driver (a ResourceSlice
of ``gpu.nvidia.com``) can give the same GPU to two pods: reported, not
refused, since a cluster in the middle of moving from one to the other
has such nodes for a while.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import GPU_RESOURCE, merged_classes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import (
    RESOURCE_API_VERSION,
    claim_template,
    claim_template_name,
    nodes_with_slices,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.nodes import advertises
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.request import resolve_gpu_request
from ansible_collections.gpuci.runners.plugins.module_utils.k8s.reads import read
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import named_item

CLAIM_TEMPLATE_KIND = "ResourceClaimTemplate"


def entry_claims(entries, gpu_classes, key):
    """``[(entry, DeviceClaim)]`` of the entries that ask for DRA, in the entries' order.

    ``entries`` are pools or scale sets already rendered (their GPU keys are
    valid), each with its ``name`` and job ``namespace``; ``key`` is the
    inventory variable they come from (for paths).
    """
    classes = merged_classes(gpu_classes)
    claims = []
    for index, entry in enumerate(entries):
        request = resolve_gpu_request(entry, classes, named_item(key, entry, index))
        if request.claim is not None:
            claims.append((entry, request.claim))
    return claims


def claim_templates(claims, labels_of):
    """The ResourceClaimTemplate of each of ``claims`` (entry_claims'); ``labels_of(entry)``: its objects' labels."""
    return [claim_template(claim, claim_template_name(entry["name"]), entry["namespace"], labels_of(entry))
            for entry, claim in claims]


def dra_reads(group, claims):
    """What DRA entries need of the cluster, as k8s_reads takes it (answers under ``group``): its DeviceClasses
    (cluster_refusal), and the nodes and slices that say where a GPU is handed out twice (doubly_allocated_nodes).
    Read only when an entry asks for DRA; only what those checks use is kept."""
    if not claims:
        return []
    return [
        read(group, "device_classes", "DeviceClass", RESOURCE_API_VERSION, hidden_fields=["spec"]),
        read(group, "resource_slices", "ResourceSlice", RESOURCE_API_VERSION, hidden_fields=["spec.devices"]),
        read(group, "nodes", "Node", hidden_fields=["spec", "metadata.labels", "metadata.annotations",
                                                    "status.conditions", "status.images", "status.nodeInfo"]),
    ]


def device_class_needs(claims):
    """``[[entry name, DeviceClass]]`` of ``claims`` (entry_claims'): what cluster_refusal checks, as plain data."""
    return [[entry["name"], claim.device_class] for entry, claim in claims]


def cluster_refusal(needs, device_classes, key):
    """Why the cluster cannot serve these claims ("" when it can), naming the entries under ``key``.

    ``needs`` are device_class_needs'; ``device_classes`` the answer of the
    read of DeviceClasses (k8s_info's: ``api_found`` false when the API
    server does not serve ``resource.k8s.io/v1``).
    """
    if not needs:
        return ""
    if not (device_classes or {}).get("api_found", True):
        return ("%s: %s ask for their GPU through DRA (gpu_allocation: dra), but the cluster does not serve %s "
                "(Kubernetes 1.34 or later); use gpu_allocation: device_plugin there"
                % (key, ", ".join(name for name, device_class in needs), RESOURCE_API_VERSION))
    present = set(obj["metadata"]["name"] for obj in (device_classes or {}).get("resources") or [])
    missing = [(name, device_class) for name, device_class in needs if device_class not in present]
    if missing:
        return ("%s: the cluster has no DeviceClass %s, which the claims of %s need: deploy NVIDIA's DRA driver for "
                "GPUs first (gpu_operator_gpu_allocation: dra, or the driver's own chart)"
                % (key, ", ".join(sorted(set(device_class for name, device_class in missing))),
                   ", ".join(name for name, device_class in missing)))
    return ""


def doubly_allocated_nodes(nodes, slices):
    """Names of the nodes whose GPUs a device plugin advertises while NVIDIA's DRA driver publishes them too."""
    dra_nodes = nodes_with_slices(slices)
    return sorted(node["metadata"]["name"] for node in nodes or []
                  if node["metadata"]["name"] in dra_nodes and advertises(node, GPU_RESOURCE))


def stale_claim_templates(found, templates, entry_label, removed=()):
    """The found claim templates (the role's, by label) that no entry asks for any more, as deletions.

    Those of the ``removed`` entries (by their ``entry_label``) are left out:
    they go with the rest of their entry's objects.
    """
    wanted = set(_key(template) for template in templates)
    return [{"apiVersion": RESOURCE_API_VERSION, "kind": CLAIM_TEMPLATE_KIND,
             "metadata": {"name": obj["metadata"]["name"], "namespace": obj["metadata"]["namespace"]}}
            for obj in found or [] if _key(obj) not in wanted
            and (obj["metadata"].get("labels") or {}).get(entry_label) not in removed]


def _key(obj):
    return obj["metadata"].get("namespace"), obj["metadata"]["name"]
