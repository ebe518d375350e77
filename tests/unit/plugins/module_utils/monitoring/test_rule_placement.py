# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where playbooks/alert_rules.yml places the PrometheusRule: every mode, with and without the CRD and namespace."""
import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError
from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.rule_placement import rule_placement

CRD = [{"metadata": {"name": "prometheusrules.monitoring.coreos.com"}}]
NAMESPACE = [{"metadata": {"name": "monitoring"}}]


@pytest.mark.parametrize("settings, crd, namespace, apply", [
    ({}, CRD, NAMESPACE, True),
    ({}, [], NAMESPACE, False),
    ({}, CRD, [], False),
    ({"gpuci_alert_rules_in_cluster": "off"}, CRD, NAMESPACE, False),
    ({"gpuci_alert_rules_in_cluster": True}, CRD, NAMESPACE, True),
    ({"gpuci_alert_rules_in_cluster": False}, CRD, NAMESPACE, False),
], ids=["auto", "auto-no-crd", "auto-no-namespace", "off", "yaml-on", "yaml-off"])
def test_the_rule_is_placed_only_where_it_can_be_read(settings, crd, namespace, apply):
    decision = rule_placement(settings, crd, namespace)
    assert (decision["apply"], decision["remove"]) == (apply, False)
    assert decision["why"]


def test_absent_removes_wherever_the_crd_exists_whatever_the_mode():
    absent = {"gpuci_alert_rules_state": "absent", "gpuci_alert_rules_in_cluster": "off"}
    assert rule_placement(absent, CRD, [])["remove"] is True
    assert rule_placement(absent, [], [])["remove"] is False


@pytest.mark.parametrize("settings, crd, namespace, fragments", [
    ({"gpuci_alert_rules_in_cluster": "on"}, [], NAMESPACE,
     ["gpuci_alert_rules_in_cluster", "prometheusrules.monitoring.coreos.com", "auto or off"]),
    ({"gpuci_alert_rules_in_cluster": "on", "gpuci_alert_rule_namespace": "prom"}, CRD, [],
     ["gpuci_alert_rule_namespace", "'prom'", "is on"]),
    ({"gpuci_alert_rules_in_cluster": "sometimes"}, CRD, NAMESPACE,
     ["gpuci_alert_rules_in_cluster", "auto, on, off", "sometimes"]),
    ({"gpuci_alert_rules_state": "gone"}, CRD, NAMESPACE, ["gpuci_alert_rules_state", "present or absent", "gone"]),
], ids=["on-without-crd", "on-without-namespace", "bad-mode", "bad-state"])
def test_what_cannot_be_done_is_refused_naming_the_variable(settings, crd, namespace, fragments):
    with pytest.raises(ValidationError) as refused:
        rule_placement(settings, crd, namespace)
    for fragment in fragments:
        assert fragment in str(refused.value)
