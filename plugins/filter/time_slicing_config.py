# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The time_slicing_config filter; documentation in time_slicing_config.yml, logic in module_utils/gpu_operator/time_slicing.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.time_slicing import time_slicing_config
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_filter


class FilterModule(object):
    def filters(self):
        return {"time_slicing_config": as_filter("time_slicing_config", time_slicing_config)}
