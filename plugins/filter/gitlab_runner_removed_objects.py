# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gitlab_runner_removed_objects filter; documentation in gitlab_runner_removed_objects.yml, logic in module_utils/gitlab_runner/removals.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.removals import gitlab_runner_removed_objects
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_input_filter


class FilterModule(object):
    def filters(self):
        return {"gitlab_runner_removed_objects": as_input_filter("gitlab_runner_removed_objects", gitlab_runner_removed_objects)}
