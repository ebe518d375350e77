# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The one rule that matches a GPU's name, as nvidia-smi prints it, with a class's product label.

A class names its GPU by the label GPU Feature Discovery puts on the node
(``nvidia.com/gpu.product``, classes.py). GFD makes that label from the
name NVML reports, the same name ``nvidia-smi`` prints, by replacing every
space with a dash (k8s-device-plugin, internal/lm/resource.go,
``productLabel``):

    nvidia-smi name          product label
    NVIDIA L40S              NVIDIA-L40S
    NVIDIA H100 80GB HBM3    NVIDIA-H100-80GB-HBM3
    NVIDIA H200              NVIDIA-H200
    NVIDIA A100-SXM4-80GB    NVIDIA-A100-SXM4-80GB

GFD may append what the node does with the GPU: ``-MIG-<profile>`` (the
``single`` MIG strategy labels the node by its MIG devices' profile) and
``-SHARED`` (time-slicing without renaming the resource). Those say how the
node shares the GPU, not which GPU it is, so they are dropped from the
class's label before the names are compared. The comparison is otherwise
exact: case and every character count, as in the label the scheduler
matched.
"""

from __future__ import annotations

import re

# What GFD appends to the product label (in this order) besides the GPU's name.
_NODE_SUFFIXES = re.compile(r"(?:-MIG-[^-]+)?(?:-SHARED)?$")


def product_label(gpu_name):
    """The product label GFD gives a GPU that nvidia-smi names ``gpu_name``: spaces become dashes."""
    return str(gpu_name).strip().replace(" ", "-")


def gpu_of_label(product):
    """A class's product label without GFD's suffixes for MIG and sharing: the GPU's own name, dashed."""
    return _NODE_SUFFIXES.sub("", str(product), count=1)


def same_product(gpu_name, product):
    """Whether the GPU nvidia-smi names ``gpu_name`` is the one of the class whose product label is ``product``."""
    return product_label(gpu_name) == gpu_of_label(product)
