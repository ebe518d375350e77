# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The arc_runners_preflight filter; documentation in arc_runners_preflight.yml, logic in module_utils/arc_runners/preflight.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.preflight import arc_runners_preflight
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_filter


class FilterModule(object):
    def filters(self):
        return {"arc_runners_preflight": as_filter("arc_runners_preflight", arc_runners_preflight)}
