# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The arc_runner_template filter; documentation in arc_runner_template.yml, logic in module_utils/arc_runners/runner_template.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.runner_template import arc_runner_template
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_filter


class FilterModule(object):
    def filters(self):
        return {"arc_runner_template": as_filter("arc_runner_template", arc_runner_template)}
