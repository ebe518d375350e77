# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gpu_operator_node_labels filter; documentation in gpu_operator_node_labels.yml, logic in module_utils/."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.node_labels import gpu_operator_node_labels
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_input_filter


class FilterModule(object):
    def filters(self):
        return {"gpu_operator_node_labels": as_input_filter("gpu_operator_node_labels", gpu_operator_node_labels)}
