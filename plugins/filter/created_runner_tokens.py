# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The created_runner_tokens filter; documentation in created_runner_tokens.yml, logic in module_utils/created_runners.py."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.module_utils.created_runners import created_runner_tokens
from ansible_collections.gpuci.runners.plugins.module_utils.validation import ValidationError


def _created_runner_tokens(value):
    # No gpu_classes argument: runners, not GPUs.
    try:
        return created_runner_tokens(value)
    except ValidationError as error:
        raise AnsibleFilterError("gpuci.runners.created_runner_tokens: %s" % error)


class FilterModule(object):
    def filters(self):
        return {"created_runner_tokens": _created_runner_tokens}
