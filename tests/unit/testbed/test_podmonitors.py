# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The testbed's translation of PodMonitors into scrape configs (tools/testbed/lib/podmonitors.py),
checked against what the Prometheus Operator v0.93.0 writes (pkg/prometheus/promcfg.go and its golden
files), and the testbed Prometheus's configuration and CRDs around it."""
from pathlib import Path

import pytest

from lib import crds, podmonitors, prometheus
from lib.layout import Layout

LAYOUT = Layout(state=Path("/tmp/state"), charts_dir=Path("/charts"), apiserver_port=16443, etcd_port=12379,
                chart_repo_port=18879)
REPO = Path(__file__).resolve().parents[3]

# The operator's defaults, before and after the selector and port rules (promcfg.go, generatePodMonitorConfig).
JOB_NAME_KEPT = {"source_labels": ["job"], "target_label": "__tmp_prometheus_job_name"}
RUNNING_ONLY = {"action": "drop", "source_labels": ["__meta_kubernetes_pod_phase"], "regex": "(Failed|Succeeded)"}
TARGET_LABELS = [
    {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
    {"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container"},
    {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
]


def monitor(spec, name="defaultPodMonitor", namespace="default"):
    return {"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
            "metadata": {"name": name, "namespace": namespace}, "spec": spec}


def test_the_operators_own_example_translates_as_its_golden_file_says():
    """The operator's monitorObjectWithoutScrapeClass.golden, less the sharding rules (one Prometheus here)."""
    pm = monitor({"selector": {"matchLabels": {"group": "group1"}},
                  "podMetricsEndpoints": [{"port": "web", "interval": "30s"}]})
    configs, skipped = podmonitors.scrape_configs([pm])
    assert skipped == {}
    assert configs == [{
        "job_name": "podMonitor/default/defaultPodMonitor/0",
        "honor_labels": False,
        "kubernetes_sd_configs": [{"role": "pod", "namespaces": {"names": ["default"]}}],
        "scrape_interval": "30s",
        "relabel_configs": [
            JOB_NAME_KEPT, RUNNING_ONLY,
            {"action": "keep", "source_labels": ["__meta_kubernetes_pod_label_group",
                                                 "__meta_kubernetes_pod_labelpresent_group"], "regex": "(group1);true"},
            {"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_name"], "regex": "web"},
            *TARGET_LABELS,
            {"target_label": "job", "replacement": "default/defaultPodMonitor"},
            {"target_label": "endpoint", "replacement": "web"},
        ],
    }]


def chart_monitor():
    """The PodMonitor the gitlab-runner 0.86.0 chart renders (templates/podmonitor.yaml), with the role's relabelings."""
    return monitor({
        "podMetricsEndpoints": [{"port": "metrics", "relabelings": [
            {"action": "replace", "targetLabel": "job", "replacement": "gpuci-gitlab-runner"},
            {"action": "Replace", "sourceLabels": ["__meta_kubernetes_pod_label_gpuci_runners_pool"], "regex": "(.+)",
             "targetLabel": "pool", "replacement": "$1"},
        ]}],
        "namespaceSelector": {"matchNames": ["gitlab-runner"]},
        "selector": {"matchLabels": {"release": "gitlab-runner-l40s", "app": "gitlab-runner-l40s"}},
    }, name="gitlab-runner-l40s", namespace="gitlab-runner")


def test_the_endpoints_relabelings_come_last_in_prometheus_spelling():
    (config,), _skipped = podmonitors.scrape_configs([chart_monitor()])
    rules = config["relabel_configs"]
    # matchLabels in key order, each with its presence label.
    assert rules[2]["source_labels"] == ["__meta_kubernetes_pod_label_app", "__meta_kubernetes_pod_labelpresent_app"]
    assert rules[3]["regex"] == "(gitlab-runner-l40s);true"
    assert rules[-3] == {"target_label": "endpoint", "replacement": "metrics"}
    assert rules[-2:] == [
        {"target_label": "job", "replacement": "gpuci-gitlab-runner", "action": "replace"},
        {"source_labels": ["__meta_kubernetes_pod_label_gpuci_runners_pool"], "target_label": "pool",
         "regex": "(.+)", "replacement": "$1", "action": "replace"},
    ]
    assert config["job_name"] == "podMonitor/gitlab-runner/gitlab-runner-l40s/0"


def test_match_expressions_become_keep_and_drop_rules():
    pm = monitor({"selector": {"matchExpressions": [
        {"key": "gpuci.runners/pool", "operator": "In", "values": ["a", "b"]},
        {"key": "tier", "operator": "NotIn", "values": ["x"]},
        {"key": "app.kubernetes.io/name", "operator": "Exists"},
        {"key": "canary", "operator": "DoesNotExist"},
    ]}, "podMetricsEndpoints": [{"portNumber": 9252}]})
    (config,), _skipped = podmonitors.scrape_configs([pm])
    assert config["relabel_configs"][2:7] == [
        {"action": "keep", "source_labels": ["__meta_kubernetes_pod_label_gpuci_runners_pool",
                                             "__meta_kubernetes_pod_labelpresent_gpuci_runners_pool"],
         "regex": "(a|b);true"},
        {"action": "drop", "source_labels": ["__meta_kubernetes_pod_label_tier",
                                             "__meta_kubernetes_pod_labelpresent_tier"], "regex": "(x);true"},
        {"action": "keep", "source_labels": ["__meta_kubernetes_pod_labelpresent_app_kubernetes_io_name"],
         "regex": "true"},
        {"action": "drop", "source_labels": ["__meta_kubernetes_pod_labelpresent_canary"], "regex": "true"},
        {"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_number"], "regex": "9252"},
    ]
    # No port name: no endpoint label.
    assert not any(rule.get("target_label") == "endpoint" for rule in config["relabel_configs"])


@pytest.mark.parametrize("selector, expected", [
    ({}, {"names": ["default"]}),
    ({"matchNames": ["a", "b"]}, {"names": ["a", "b"]}),
    ({"any": True}, None),
], ids=["own-namespace", "match-names", "any"])
def test_namespace_selector(selector, expected):
    pm = monitor({"namespaceSelector": selector, "podMetricsEndpoints": [{"port": "m"}]})
    (config,), _skipped = podmonitors.scrape_configs([pm])
    assert config["kubernetes_sd_configs"][0].get("namespaces") == expected


def test_job_label_pod_target_labels_and_endpoint_settings():
    pm = monitor({"jobLabel": "app.kubernetes.io/name", "podTargetLabels": ["team"], "sampleLimit": 1000,
                  "podMetricsEndpoints": [
                      {"port": "m", "path": "/m", "scheme": "HTTPS", "honorLabels": True, "interval": "10s",
                       "filterRunning": False, "params": {"a": ["1"]},
                       "metricRelabelings": [{"action": "Drop", "sourceLabels": ["__name__"], "regex": "go_.*"}]},
                      {"port": "n"}]})
    first, second = podmonitors.scrape_configs([pm])[0]
    assert (first["metrics_path"], first["scheme"], first["honor_labels"], first["scrape_interval"]) == \
        ("/m", "https", True, "10s")
    assert first["params"] == {"a": ["1"]} and first["sample_limit"] == 1000
    assert RUNNING_ONLY not in first["relabel_configs"] and RUNNING_ONLY in second["relabel_configs"]
    assert first["metric_relabel_configs"] == [{"source_labels": ["__name__"], "regex": "go_.*", "action": "drop"}]
    rules = first["relabel_configs"]
    team = {"source_labels": ["__meta_kubernetes_pod_label_team"], "target_label": "team", "regex": "(.+)",
            "replacement": "${1}"}
    job_label = {"source_labels": ["__meta_kubernetes_pod_label_app_kubernetes_io_name"], "target_label": "job",
                 "regex": "(.+)", "replacement": "${1}"}
    assert rules.index(team) < rules.index({"target_label": "job", "replacement": "default/defaultPodMonitor"}) \
        < rules.index(job_label)
    assert second["job_name"] == "podMonitor/default/defaultPodMonitor/1"


def test_a_field_not_translated_leaves_the_monitor_out_naming_it():
    tls = monitor({"podMetricsEndpoints": [{"port": "m", "tlsConfig": {"insecureSkipVerify": True}}]}, name="tls")
    role = monitor({"selectorMechanism": "RoleSelector", "podMetricsEndpoints": [{"port": "m"}]}, name="role")
    configs, skipped = podmonitors.scrape_configs([tls, role, chart_monitor()])
    assert [c["job_name"] for c in configs] == ["podMonitor/gitlab-runner/gitlab-runner-l40s/0"]
    assert skipped == {"default/tls": ["spec.podMetricsEndpoints[0].tlsConfig"], "default/role": ["spec.selectorMechanism"]}


def test_the_prometheus_configuration_discovers_through_the_testbeds_api_server():
    document, skipped = prometheus.config(LAYOUT, [chart_monitor()], [Path("/tmp/state/prometheus/rules/00-a.yml")])
    assert skipped == {}
    assert document["rule_files"] == ["/tmp/state/prometheus/rules/00-a.yml"]
    sd = document["scrape_configs"][0]["kubernetes_sd_configs"][0]
    assert sd == {"role": "pod", "namespaces": {"names": ["gitlab-runner"]}, "api_server": "https://127.0.0.1:16443",
                  "authorization": {"credentials_file": "/tmp/state/prometheus/token"},
                  "tls_config": {"ca_file": "/tmp/state/pki/ca.crt"}}


def test_the_port_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("GPUCI_PROMETHEUS_PORT", "29191")
    assert Layout.from_environment().prometheus_url == "http://127.0.0.1:29191"
    monkeypatch.delenv("GPUCI_PROMETHEUS_PORT")
    assert Layout.from_environment().prometheus_port == 19090


def test_the_docs_queries_are_found_as_the_rules_tests_find_them():
    assert len(prometheus.promql_blocks((REPO / "docs" / "monitoring.md").read_text())) >= 3
    assert prometheus.promql_blocks("```promql\nup\n```\n```yaml\nx: 1\n```\n") == ["up\n"]


def test_the_upstream_crds_are_the_operators_monitors_and_rules():
    names = {crd["metadata"]["name"] for crd in crds.definitions()}
    assert {"podmonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com"} <= names


def test_no_crds_fails_naming_the_variable(tmp_path):
    with pytest.raises(SystemExit, match="GPUCI_CRDS_DIR"):
        crds.definitions(tmp_path / "missing")
