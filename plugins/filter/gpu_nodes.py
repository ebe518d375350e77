# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gpu_nodes filter; documentation in gpu_nodes.yml, logic in module_utils/gpu_operator/gpu_nodes.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.gpu_nodes import gpu_nodes
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_input_filter


class FilterModule(object):
    def filters(self):
        # Only status.allocatable and the name of each node are read: no copy of the whole list.
        return {"gpu_nodes": as_input_filter("gpu_nodes", gpu_nodes, copy_input=False)}
