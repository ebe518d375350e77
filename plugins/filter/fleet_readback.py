# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet_readback filter; documentation in fleet_readback.yml, logic in module_utils/fleet_readback.py.

Not as_input_filter, which copies its whole input into plain data first: the
input holds every role's plan and answers of the read, of which the checks
read a few fields (the copy took 18 ms a call on a no-op site.yml).
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.module_utils.fleet_readback import fleet_readback as check
from ansible_collections.gpuci.runners.plugins.module_utils.validation import ValidationError


def fleet_readback(value):
    try:
        return check(value)
    except ValidationError as error:
        raise AnsibleFilterError("gpuci.runners.fleet_readback: %s" % error)


class FilterModule(object):
    def filters(self):
        return {"fleet_readback": fleet_readback}
