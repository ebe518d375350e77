# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ansible_core_requirement filter; documentation in ansible_core_requirement.yml, logic in module_utils/common/ansible_core_requirement.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.ansible_core_requirement import ansible_core_requirement
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_input_filter


class FilterModule(object):
    def filters(self):
        return {"ansible_core_requirement": as_input_filter("ansible_core_requirement", ansible_core_requirement)}
