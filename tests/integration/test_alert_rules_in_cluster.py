# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/alert_rules.yml places the PrometheusRule where the Prometheus Operator's CRD and the rule's
namespace exist, refuses `on` without the namespace, and takes the rule out with
gpuci_alert_rules_state=absent.

The testbed's API server has the real PrometheusRule CRD (prometheus-operator
v0.93.0, installed by `testbed.py up`): it validates the rule the playbook
applies. The namespace is this module's own.
"""
from __future__ import annotations

import uuid

import pytest

PLAYBOOK = "alert_rules.yml"
NAMESPACE = f"gpuci-alert-rules-{uuid.uuid4().hex[:6]}"
RULE = ("monitoring.coreos.com/v1", "PrometheusRule", "gpuci-runners-alerts")


@pytest.fixture(scope="module")
def rule_namespace(testbed):
    testbed.core.create_namespace({"metadata": {"name": NAMESPACE, "labels": {"gpuci.runners/test": "alert-rules"}}})
    yield NAMESPACE
    testbed.core.delete_namespace(NAMESPACE)


def run(playbooks, tmp_path, check=False, **extra):
    variables = {"gpuci_alert_rules_dir": str(tmp_path), "gpuci_alert_rule_namespace": NAMESPACE, **extra}
    return playbooks.run(PLAYBOOK, extra_vars=variables, check=check)


def the_rule(cluster):
    api_version, kind, name = RULE
    return cluster.get(api_version, kind, name, NAMESPACE)


def test_on_without_the_namespace_is_refused(testbed, playbooks, tmp_path):
    run_ = run(playbooks, tmp_path, gpuci_alert_rules_in_cluster="on", gpuci_alert_rule_namespace="no-such-namespace")
    run_.assert_failed_with("gpuci_alert_rule_namespace", "no-such-namespace")
    api_version, kind, _name = RULE
    assert testbed.list(api_version, kind) == [], "no PrometheusRule may appear"


def test_auto_places_the_rule_and_a_rerun_changes_nothing(testbed, playbooks, rule_namespace, tmp_path):
    run(playbooks, tmp_path).assert_ok()
    rule = the_rule(testbed)
    assert rule is not None, "no PrometheusRule in the rule's namespace"
    assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    alerts = {r["alert"] for group in rule["spec"]["groups"] for r in group["rules"]}
    assert {"GpuciGitlabPoolSaturated", "GpuciGitlabRunnerManagerDown"} <= alerts
    assert run(playbooks, tmp_path).assert_ok().changed == 0


def test_absent_takes_the_rule_out(testbed, playbooks, rule_namespace, tmp_path):
    check = run(playbooks, tmp_path, check=True, gpuci_alert_rules_state="absent").assert_ok()
    assert check.changed > 0 and the_rule(testbed) is not None, "check mode must remove nothing"
    run(playbooks, tmp_path, gpuci_alert_rules_state="absent").assert_ok()
    assert the_rule(testbed) is None
    assert run(playbooks, tmp_path, gpuci_alert_rules_state="absent").assert_ok().changed == 0
