# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The canary_summary filter; documentation in canary_summary.yml, logic in module_utils/gpu_canary/summary.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.summary import canary_summary
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_input_filter


class FilterModule(object):
    def filters(self):
        return {"canary_summary": as_input_filter("canary_summary", canary_summary)}
