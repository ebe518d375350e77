# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The canary_verdict filter; documentation in canary_verdict.yml, logic in module_utils/gpu_canary/verdict.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.verdict import canary_verdict
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_input_filter


class FilterModule(object):
    def filters(self):
        # No gpu_classes argument: the lanes it judges already carry their resolved requests.
        return {"canary_verdict": as_input_filter("canary_verdict", canary_verdict)}
