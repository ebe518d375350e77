# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The pending_changes filter; documentation in pending_changes.yml, logic in module_utils/."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.pending_changes import pending_changes
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_input_filter


class FilterModule(object):
    def filters(self):
        return {"pending_changes": as_input_filter("pending_changes", pending_changes)}
