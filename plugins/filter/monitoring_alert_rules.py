# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The monitoring_alert_rules filter; documentation in monitoring_alert_rules.yml, logic in module_utils/monitoring/alert_rules.py."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError
from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.alert_rules import monitoring_alert_rules


def alert_rules_filter(settings, kind="rules", defaults=None):
    """The input is handed over as Ansible gave it (a host's variables, lazily
    templated): the builder reads only the few variables it needs, so a pool's
    token is never templated here."""
    try:
        return monitoring_alert_rules(settings, kind=kind, defaults=defaults)
    except ValidationError as error:
        raise AnsibleFilterError("gpuci.runners.monitoring_alert_rules: %s" % error)


class FilterModule(object):
    def filters(self):
        return {"monitoring_alert_rules": alert_rules_filter}
