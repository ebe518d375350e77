# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The arc_runners_absent filter; documentation in arc_runners_absent.yml, logic in module_utils/arc_runners/removals.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.removals import arc_runners_absent
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_input_filter


class FilterModule(object):
    def filters(self):
        return {"arc_runners_absent": as_input_filter("arc_runners_absent", arc_runners_absent)}
