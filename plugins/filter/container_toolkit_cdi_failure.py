# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The container_toolkit_cdi_failure filter; documentation in container_toolkit_cdi_failure.yml, logic in module_utils/container_toolkit/cdi.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.container_toolkit.cdi import failure_message
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_input_filter


class FilterModule(object):
    def filters(self):
        return {"container_toolkit_cdi_failure": as_input_filter("container_toolkit_cdi_failure", failure_message)}
