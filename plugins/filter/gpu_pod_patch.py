# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gpu_pod_patch filter; documentation in gpu_pod_patch.yml, logic in module_utils/gpu/pod_patch.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.pod_patch import gpu_pod_patch
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_filter


class FilterModule(object):
    def filters(self):
        return {"gpu_pod_patch": as_filter("gpu_pod_patch", gpu_pod_patch)}
