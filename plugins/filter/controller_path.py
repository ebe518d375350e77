# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The controller_path filter; documentation in controller_path.yml, logic in module_utils/common/controller_path.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.controller_path import controller_path
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_input_filter


class FilterModule(object):
    def filters(self):
        return {"controller_path": as_input_filter("controller_path", controller_path)}
