# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gitlab_runner_preflight filter; documentation in gitlab_runner_preflight.yml, logic in module_utils/gitlab_runner/preflight.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.preflight import gitlab_runner_preflight
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_filter


class FilterModule(object):
    def filters(self):
        return {"gitlab_runner_preflight": as_filter("gitlab_runner_preflight", gitlab_runner_preflight)}
