# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The canary_verdict filter; documentation in canary_verdict.yml, logic in module_utils/canary_verdict.py."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.module_utils.canary_verdict import canary_verdict
from ansible_collections.gpuci.runners.plugins.module_utils.validation import ValidationError


def _canary_verdict(value):
    # No gpu_classes argument: the lanes it judges already carry their resolved requests.
    try:
        return canary_verdict(value)
    except ValidationError as error:
        raise AnsibleFilterError("gpuci.runners.canary_verdict: %s" % error)


class FilterModule(object):
    def filters(self):
        return {"canary_verdict": _canary_verdict}
