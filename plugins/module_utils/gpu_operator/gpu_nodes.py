# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which nodes advertise NVIDIA GPUs: what the gpu_operator role waits for (gpu_operator_wait_for_gpu_nodes).

Only a running device plugin puts NVIDIA GPUs among a node's allocatable
resources: whole GPUs as ``nvidia.com/gpu``, MIG slices as
``nvidia.com/mig-<profile>`` (the mixed strategy). A node counts when one of
them is above zero; a node whose GPUs are all taken still counts, as
allocatable is what the node offers, not what is free.

Reading what a node advertises is gpu/nodes.py's, shared with the canary's
lanes; which of those resources are NVIDIA GPUs is this wait's own question.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import GPU_RESOURCE, mig_resource
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.nodes import advertises, allocatable

_MIG_PREFIX = mig_resource("")


def gpu_nodes(nodes):
    """Names of the nodes (as k8s_info or k8s_reads return them) advertising at least one NVIDIA GPU or MIG slice."""
    return sorted((node.get("metadata") or {}).get("name", "") for node in nodes or []
                  if any(_is_gpu(resource) and advertises(node, resource) for resource in allocatable(node)))


def _is_gpu(resource):
    return resource == GPU_RESOURCE or resource.startswith(_MIG_PREFIX)
