# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ownership_labels filter; documentation in ownership_labels.yml, logic in module_utils/common/ownership_labels.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.ownership_labels import ownership_labels
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_input_filter


class FilterModule(object):
    def filters(self):
        return {"ownership_labels": as_input_filter("ownership_labels", ownership_labels)}
