# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The alert rules built from the inventory: which rules, which selectors, which thresholds, which errors.

Whether the rules fire when they should is promtool's to say (tests/rules);
these check what the builder decides.
"""

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError
from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.alert_rules import (
    METRICS,
    THRESHOLDS,
    alert_rules,
    monitoring_alert_rules,
    prometheus_rule,
)

POOLS = [{"name": "l40s", "gpu_class": "l40s", "token": "glrt-x", "namespace": "ci-jobs"},
         {"name": "cpu", "token": "glrt-y"},
         {"name": "old", "gpu_class": "a10", "state": "absent"}]
SCALE_SETS = [{"name": "a10", "gpu_class": "a10", "max_runners": 2}]
SETTINGS = {"gitlab_runner_pools": POOLS, "gitlab_runner_namespace": "gitlab-runner",
            "arc_runners_scale_sets": SCALE_SETS, "arc_runners_scale_set_namespace": "arc-runners"}


def rules(settings=None, defaults=None):
    return {rule["alert"] + (":" + rule["labels"].get("gpu_class", "") if "Down" in rule["alert"] else ""): rule
            for group in alert_rules(SETTINGS if settings is None else settings, defaults)["groups"]
            for rule in group["rules"]}


def test_every_alert_the_issue_asks_for_is_built_for_the_inventory():
    built = alert_rules(SETTINGS)
    assert [group["name"] for group in built["groups"]] == ["gpuci-gitlab-runner", "gpuci-gpu", "gpuci-arc-runners"]
    assert sorted({rule["alert"] for group in built["groups"] for rule in group["rules"]}) == [
        "GpuciArcScaleSetAtMax", "GpuciGitlabJobsQueuedTooLong", "GpuciGitlabPoolSaturated",
        "GpuciGitlabRunnerManagerDown", "GpuciGitlabRunnerSystemFailures", "GpuciGpuIdleInCiJob",
        "GpuciGpuXidError"]


def test_only_present_pools_are_selected_and_each_gets_its_manager_rule():
    built = rules()
    assert 'pool=~"cpu|l40s"' in built["GpuciGitlabPoolSaturated"]["expr"]
    assert "old" not in built["GpuciGitlabPoolSaturated"]["expr"]
    assert built["GpuciGitlabRunnerManagerDown:l40s"]["expr"] == (
        'up{job="gpuci-gitlab-runner",pool="l40s"} == 0 or absent(up{job="gpuci-gitlab-runner",pool="l40s"})')
    assert "gpu_class" not in built["GpuciGitlabRunnerManagerDown:"]["labels"]  # the cpu pool


def test_the_rules_read_only_metrics_whose_source_is_recorded():
    text = str(alert_rules(SETTINGS))
    for metric in METRICS:
        if metric != "up":
            assert metric in text
    assert 'failure_reason="runner_system_failure"' in text


def test_idle_gpus_are_looked_for_in_the_gpu_entries_job_namespaces_only():
    expr = rules()["GpuciGpuIdleInCiJob"]["expr"]
    assert expr == 'DCGM_FI_DEV_GPU_UTIL{namespace=~"arc-runners|ci-jobs",pod!=""} <= 1'


def test_the_roles_defaults_give_the_namespace_where_the_inventory_sets_none():
    settings = {"gitlab_runner_pools": [{"name": "l40s", "gpu_class": "l40s"}]}
    expr = rules(settings, [{"gitlab_runner_namespace": "from-defaults"}])["GpuciGpuIdleInCiJob"]["expr"]
    assert 'namespace=~"from-defaults"' in expr
    with pytest.raises(ValidationError, match=r"^gitlab_runner_namespace: expected the namespace of l40s's job pods"):
        alert_rules(settings)


def test_groups_are_left_out_when_the_inventory_has_nothing_for_them():
    assert alert_rules({}) == {"groups": []}
    only_cpu = alert_rules({"gitlab_runner_pools": [{"name": "cpu"}], "gitlab_runner_namespace": "g"})
    assert [group["name"] for group in only_cpu["groups"]] == ["gpuci-gitlab-runner"]


def test_defaults_live_in_one_table_and_overrides_land_in_the_rules():
    assert THRESHOLDS["gpuci_alert_queue_seconds"][0] == 300
    built = rules({**SETTINGS, "gpuci_alert_queue_seconds": 600, "gpuci_alert_pool_saturated_for": "1h",
                   "gpuci_alert_gpu_idle_for": 900, "gpuci_alert_system_failures": "5"})
    assert built["GpuciGitlabJobsQueuedTooLong"]["expr"].endswith("> 600")
    assert built["GpuciGitlabPoolSaturated"]["for"] == "1h"
    assert built["GpuciGpuIdleInCiJob"]["for"] == "900s"
    assert built["GpuciGitlabRunnerSystemFailures"]["expr"].endswith(">= 5")


@pytest.mark.parametrize("variable, value, expected", [
    ("gpuci_alert_queue_seconds", "ten", "gpuci_alert_queue_seconds: expected a positive number, got 'ten'"),
    ("gpuci_alert_queue_seconds", -1, "gpuci_alert_queue_seconds: expected a positive number, got -1"),
    ("gpuci_alert_gpu_idle_percent", True, "gpuci_alert_gpu_idle_percent: expected a positive number, got True"),
    ("gpuci_alert_pool_saturated_ratio", 1.5,
     "gpuci_alert_pool_saturated_ratio: expected a number above 0 and at most 1, got 1.5"),
    ("gpuci_alert_system_failures", 2.5, "gpuci_alert_system_failures: expected a positive whole number, got 2.5"),
    ("gpuci_alert_gpu_idle_for", "soon",
     "gpuci_alert_gpu_idle_for: expected a positive duration such as '15m' or a number of seconds, got 'soon'"),
    ("gpuci_alert_manager_down_for", "0m",
     "gpuci_alert_manager_down_for: expected a positive duration such as '15m' or a number of seconds, got '0m'"),
    ("gpuci_alert_queue_window", [15], "gpuci_alert_queue_window: expected a positive duration"),
])
def test_a_bad_threshold_is_refused_naming_its_variable(variable, value, expected):
    with pytest.raises(ValidationError) as error:
        alert_rules({**SETTINGS, variable: value})
    assert str(error.value).startswith(expected)


def test_pool_names_are_matched_exactly_even_with_regex_characters():
    built = rules({"gitlab_runner_pools": [{"name": "a.b"}, {"name": "c"}]})
    assert 'pool=~"a\\\\.b|c"' in built["GpuciGitlabPoolSaturated"]["expr"]


def test_bad_entries_name_their_place_in_the_inventory():
    with pytest.raises(ValidationError, match=r"^gitlab_runner_pools\[1\]\.name: is required"):
        alert_rules({"gitlab_runner_pools": [{"name": "a"}, {"gpu_class": "l40s"}]})
    with pytest.raises(ValidationError, match=r"^arc_runners_scale_sets: expected a list, got 'a10'"):
        alert_rules({"arc_runners_scale_sets": "a10"})


def test_only_the_keys_the_rules_need_are_read_from_a_pool():
    class Untouchable(dict):
        def __getitem__(self, key):
            if key == "token":
                raise AssertionError("the token was read")
            return super().__getitem__(key)

        def get(self, key, default=None):
            return self[key] if key in self else default

    alert_rules({"gitlab_runner_pools": [Untouchable(name="l40s", gpu_class="l40s", namespace="j", token="glrt-x")]})


def test_the_prometheus_rule_carries_the_same_groups_and_the_selecting_labels():
    rule = prometheus_rule(SETTINGS)
    assert rule["apiVersion"] == "monitoring.coreos.com/v1" and rule["kind"] == "PrometheusRule"
    assert rule["spec"] == alert_rules(SETTINGS)
    assert rule["metadata"]["namespace"] == "monitoring"
    assert rule["metadata"]["labels"]["release"] == "kube-prometheus-stack"
    assert rule["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "gpuci.runners"
    mine = prometheus_rule({**SETTINGS, "gpuci_alert_rule_labels": {"prometheus": "ci"},
                            "gpuci_alert_rule_namespace": "obs"})
    assert "release" not in mine["metadata"]["labels"] and mine["metadata"]["labels"]["prometheus"] == "ci"
    assert mine["metadata"]["namespace"] == "obs"
    with pytest.raises(ValidationError, match=r"^gpuci_alert_rule_labels\.release: must be a string"):
        prometheus_rule({**SETTINGS, "gpuci_alert_rule_labels": {"release": 1}})


def test_the_kind_chooses_the_shape():
    assert monitoring_alert_rules(SETTINGS) == alert_rules(SETTINGS)
    assert monitoring_alert_rules(SETTINGS, "PrometheusRule")["kind"] == "PrometheusRule"
    with pytest.raises(ValidationError, match=r"^kind: expected one of rules, PrometheusRule, got 'yaml'"):
        monitoring_alert_rules(SETTINGS, "yaml")


def test_a_dra_pool_is_watched_like_a_device_plugin_pool():
    """DCGM's exporter attributes a GPU to its pod from the kubelet's pod resources API, which reports DRA
    claims too from Kubernetes 1.34 on (KubeletPodResourcesDynamicResources, beta, on by default): the same
    pod and namespace labels, so the GPU rules select a DRA pool's jobs as they select the others'."""
    dra = [dict(POOLS[0], name="h200-dra", gpu_class="h200", gpu_allocation="dra", namespace="dra-jobs")]
    built = rules(dict(SETTINGS, gitlab_runner_pools=POOLS + dra))
    assert 'namespace=~"arc-runners|ci-jobs|dra-jobs"' in built["GpuciGpuIdleInCiJob"]["expr"]
    assert "GpuciGitlabRunnerManagerDown:h200" in built
