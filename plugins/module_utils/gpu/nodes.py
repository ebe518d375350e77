# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a node (as k8s_info or k8s_reads return it) offers: its allocatable resources.

Both the gpu_operator role's wait for GPU nodes (gpu_operator/gpu_nodes.py)
and the canary's lanes (gpu_canary/lanes.py) ask whether a node advertises a
device plugin resource; the answer is read here once. Allocatable is what the
node offers, not what is free: a node whose GPUs are all taken still
advertises them.
"""

from __future__ import annotations


def advertises(node, resource):
    """Whether the node offers the resource among its allocatable ones (above zero)."""
    # The API gives quantities as strings ("2"); a status patch may give a number.
    return str(allocatable(node).get(resource, "0")) not in ("0", "")


def allocatable(node):
    """The node's allocatable resources by name; empty for a node with no status yet."""
    return (node.get("status") or {}).get("allocatable") or {}
