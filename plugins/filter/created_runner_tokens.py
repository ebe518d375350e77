# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The created_runner_tokens filter; documentation in created_runner_tokens.yml, logic in module_utils/gitlab_runner/created_runner_tokens.py."""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.created_runner_tokens import created_runner_tokens
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import as_input_filter


class FilterModule(object):
    def filters(self):
        # No gpu_classes argument: runners, not GPUs.
        return {"created_runner_tokens": as_input_filter("created_runner_tokens", created_runner_tokens)}
