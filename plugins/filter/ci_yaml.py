# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ci_yaml filter; documentation in ci_yaml.yml, logic in plugin_utils/ci_yaml.py (controller-side: it needs PyYAML)."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.plugin_utils.ci_yaml import ci_yaml
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_filter


class FilterModule(object):
    def filters(self):
        return {"ci_yaml": as_filter("ci_yaml", ci_yaml)}
