# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The monitors' decisions (module_utils/monitoring/monitors.py): modes, labels, the CRD's read, the refusal of
``on`` without the CRD, and the relabelings that give a runner manager's target the alert rules' labels."""

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError
from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.alert_rules import SCRAPE_LABELS
from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.monitors import (
    POD_MONITOR_CRD,
    crd_read,
    labels_problems,
    meta_pod_label,
    mode_problems,
    monitor_mode,
    monitor_spec,
    monitors_wanted,
    pod_monitor,
    scrape_relabelings,
)

VAR = "gitlab_runner_pod_monitors"
CRD = [{"kind": "CustomResourceDefinition", "metadata": {"name": POD_MONITOR_CRD}}]


def spec(mode):
    return monitor_spec({VAR: mode}, VAR, POD_MONITOR_CRD)


@pytest.mark.parametrize("mode, found, wanted", [
    ("auto", CRD, True), ("auto", [], False), ("on", CRD, True), ("off", CRD, False), ("off", [], False)])
def test_the_mode_and_the_crd_decide_the_monitor(mode, found, wanted):
    assert monitors_wanted(spec(mode), found) == (wanted, "")


def test_on_without_the_crd_is_refused_naming_the_variable_and_the_crd():
    wanted, refusal = monitors_wanted(spec("on"), [])
    assert wanted is False
    assert refusal.startswith("gitlab_runner_pod_monitors: is on, but the cluster has no CustomResourceDefinition "
                              "podmonitors.monitoring.coreos.com")


def test_yaml_booleans_are_on_and_off_and_unset_is_auto():
    assert [monitor_mode({VAR: value}, VAR) for value in (True, False, "on")] == ["on", "off", "on"]
    assert monitor_mode({}, VAR) == "auto"


def test_a_role_without_metrics_has_its_monitor_off():
    assert monitor_spec({VAR: "on"}, VAR, POD_MONITOR_CRD, wanted=False)["mode"] == "off"


@pytest.mark.parametrize("value", ["yes", 1, None, ["on"]])
def test_a_bad_mode_is_named(value):
    assert mode_problems({VAR: value}, VAR) == ["%s: must be one of auto, on, off (got %r)" % (VAR, value)]


def test_good_modes_have_no_problem():
    assert [mode_problems({VAR: value}, VAR) for value in ("auto", "on", "off", True, False)] == [[]] * 5
    assert mode_problems({}, VAR) == []


@pytest.mark.parametrize("value, path", [
    (["release"], "gitlab_runner_pod_monitor_labels"), ({"release": True}, "gitlab_runner_pod_monitor_labels.release"),
    ("release=x", "gitlab_runner_pod_monitor_labels")])
def test_bad_labels_are_named(value, path):
    (problem,) = labels_problems({"gitlab_runner_pod_monitor_labels": value}, "gitlab_runner_pod_monitor_labels")
    assert problem.startswith(path + ":")


def test_labels_may_be_unset_or_empty():
    for settings in ({}, {"l": None}, {"l": {}}, {"l": {"release": "kube-prometheus-stack"}}):
        assert labels_problems(settings, "l") == []


def test_the_crd_is_read_by_name_cluster_scoped():
    assert crd_read("gitlab_runner", "pod_monitor_crd", POD_MONITOR_CRD) == {
        "group": "gitlab_runner", "key": "pod_monitor_crd", "kind": "CustomResourceDefinition",
        "api_version": "apiextensions.k8s.io/v1", "name": POD_MONITOR_CRD}


def test_a_spec_that_is_none_is_our_error():
    with pytest.raises(ValidationError):
        monitors_wanted(None, [])


def test_pod_labels_are_named_as_kubernetes_discovery_names_them():
    assert meta_pod_label("gpuci.runners/gpu-class") == "__meta_kubernetes_pod_label_gpuci_runners_gpu_class"


def test_the_relabelings_write_exactly_the_scrape_labels():
    relabelings = scrape_relabelings("gpuci.runners/pool", "gpuci.runners/gpu-class")
    assert {entry["targetLabel"] for entry in relabelings} == {"job", SCRAPE_LABELS["pool"], SCRAPE_LABELS["gpu_class"]}
    job, pool, gpu_class = relabelings
    assert job == {"action": "replace", "targetLabel": "job", "replacement": "gpuci-gitlab-runner"}
    assert pool["sourceLabels"] == ["__meta_kubernetes_pod_label_gpuci_runners_pool"]
    assert gpu_class["sourceLabels"] == ["__meta_kubernetes_pod_label_gpuci_runners_gpu_class"]
    # An empty source (a pool without a GPU class) writes no label.
    assert pool["regex"] == gpu_class["regex"] == "(.+)"


def test_a_pod_monitor_selects_its_pods_in_its_namespaces():
    monitor = pod_monitor("arc", "arc-systems", {"a": "b"}, {"app": "x"}, "metrics", honor_labels=True,
                          namespaces=["b", "a", "b"])
    assert monitor["kind"] == "PodMonitor" and monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["spec"] == {"selector": {"matchLabels": {"app": "x"}}, "namespaceSelector": {"matchNames": ["a", "b"]},
                               "podMetricsEndpoints": [{"port": "metrics", "path": "/metrics", "honorLabels": True}]}
    assert pod_monitor("x", "ns", {}, {}, "m")["spec"]["namespaceSelector"] == {"matchNames": ["ns"]}
