# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The monitoring_rule_placement filter; documentation in monitoring_rule_placement.yml, logic in module_utils/monitoring/rule_placement.py."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError
from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.rule_placement import rule_placement


def rule_placement_filter(settings, crd_found, namespace_found):
    try:
        return rule_placement(settings, crd_found, namespace_found)
    except ValidationError as error:
        raise AnsibleFilterError("gpuci.runners.monitoring_rule_placement: %s" % error)


class FilterModule(object):
    def filters(self):
        return {"monitoring_rule_placement": rule_placement_filter}
