# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether playbooks/alert_rules.yml puts the PrometheusRule in a cluster, or takes it out.

``gpuci_alert_rules_in_cluster`` (auto, on, off; default auto) decides as the
roles' monitor variables do (monitoring/monitors.py): ``auto`` places the rule
where the cluster has the PrometheusRule CRD, ``on`` refuses to run without
it, ``off`` never touches the cluster. The rule's namespace
(``gpuci_alert_rule_namespace``) belongs to the user's Prometheus: the
collection never creates it. So ``auto`` places the rule only where that
namespace exists too, and ``on`` refuses without it, naming the variable.
``gpuci_alert_rules_state: absent`` removes the rule wherever the CRD exists.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError, show
from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.monitors import (
    PROMETHEUS_RULE_CRD,
    check_mode,
    missing_crd,
    monitor_made,
    monitor_spec,
)

MODE_VARIABLE = "gpuci_alert_rules_in_cluster"
STATE_VARIABLE = "gpuci_alert_rules_state"
STATES = ("present", "absent")


def rule_placement(settings, crd_found, namespace_found):
    """``{"apply": bool, "remove": bool, "why": str}`` for one cluster; a refusal raises ValidationError.

    ``crd_found`` and ``namespace_found``: the resources the playbook's reads
    found (the CRD by name, the rule's namespace by name); empty when absent.
    """
    check_mode(settings, MODE_VARIABLE)
    state = settings.get(STATE_VARIABLE, "present")
    if state not in STATES:
        raise ValidationError(STATE_VARIABLE, "must be present or absent, got %s" % show(state))
    spec = monitor_spec(settings, MODE_VARIABLE, PROMETHEUS_RULE_CRD)
    if state == "absent":
        # Whatever the mode: a rule placed earlier is taken out wherever it can exist.
        return {"apply": False, "remove": bool(crd_found), "why": "state absent"}
    refusal = missing_crd(spec, crd_found)
    if refusal:
        raise refusal
    if not monitor_made(spec, crd_found):
        return {"apply": False, "remove": False, "why": "%s is %s and the cluster %s the CRD %s" % (
            MODE_VARIABLE, spec["mode"], "has" if crd_found else "lacks", PROMETHEUS_RULE_CRD)}
    namespace = settings.get("gpuci_alert_rule_namespace", "monitoring")
    if not namespace_found:
        if spec["mode"] == "on":
            raise ValidationError("gpuci_alert_rule_namespace", "the cluster has no namespace %s for the "
                                  "PrometheusRule (%s is on); name the namespace your Prometheus reads rules from"
                                  % (show(namespace), MODE_VARIABLE))
        return {"apply": False, "remove": False,
                "why": "the cluster has no namespace %s (gpuci_alert_rule_namespace)" % show(namespace)}
    return {"apply": True, "remove": False, "why": "the cluster has the CRD and the namespace %s" % show(namespace)}
