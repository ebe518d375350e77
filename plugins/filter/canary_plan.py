# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The canary_plan filter; documentation in canary_plan.yml, logic in module_utils/gpu_canary/plan.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.plan import canary_plan
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_filter


class FilterModule(object):
    def filters(self):
        return {"canary_plan": as_filter("canary_plan", canary_plan)}
