# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The proof_report filter; documentation in proof_report.yml, logic in module_utils/gpu_canary/proof_report.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.proof_report import proof_report
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_input_filter


class FilterModule(object):
    def filters(self):
        # No gpu_classes argument: the lanes it judges already carry their resolved requests.
        return {"proof_report": as_input_filter("proof_report", proof_report)}
