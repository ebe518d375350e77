# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet_readback filter; documentation in fleet_readback.yml, logic in module_utils/fleet/readback.py.

Its input is not copied into plain data first: it holds every role's plan and
answers of the read, of which the checks read a few fields (the copy took
18 ms a call on a no-op site.yml).
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.fleet.readback import fleet_readback
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_input_filter


class FilterModule(object):
    def filters(self):
        return {"fleet_readback": as_input_filter("fleet_readback", fleet_readback, copy_input=False)}
