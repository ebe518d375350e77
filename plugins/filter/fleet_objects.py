# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet_objects filter; documentation in fleet_objects.yml, logic in module_utils/fleet/objects.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.fleet.objects import fleet_objects
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_input_filter


class FilterModule(object):
    def filters(self):
        return {"fleet_objects": as_input_filter("fleet_objects", fleet_objects)}
