# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The testbed's Prometheus Operator CRDs and Prometheus, without the real node (simulated pods only).

The gitlab-runner chart's own PodMonitor (rendered by helm from the chart
the roles install) is accepted by the API server, a broken one is refused
by the CRD's schema; the Prometheus discovers, through the API server, the
pod the monitor selects (on a kwok node: its target is down, its labels
are what counts) and none of those it does not.
"""
from __future__ import annotations

import subprocess

import pytest
import yaml
from kubernetes.client.rest import ApiException

from helpers import kubectl_binary
from lib import crds, processes, prometheus
from lib.layout import Layout

NAMESPACE = "testbed-prometheus"
RELEASE = "gitlab-runner-l40s"
CHART = "gitlab-runner-0.86.0"
# The relabelings a pool's PodMonitor carries (the gitlab_runner role's, to the alert rules' SCRAPE_LABELS).
RELABELINGS = [
    {"action": "replace", "targetLabel": "job", "replacement": "gpuci-gitlab-runner"},
    {"action": "replace", "sourceLabels": ["__meta_kubernetes_pod_label_gpuci_runners_pool"], "regex": "(.+)",
     "targetLabel": "pool", "replacement": "$1"},
    {"action": "replace", "sourceLabels": ["__meta_kubernetes_pod_label_gpuci_runners_gpu_class"], "regex": "(.+)",
     "targetLabel": "gpu_class", "replacement": "$1"},
]
CHART_POD_LABELS = {"app": RELEASE, "chart": CHART, "release": RELEASE, "heritage": "Helm"}


@pytest.fixture(scope="module")
def layout():
    return Layout.from_environment()


@pytest.fixture(scope="module")
def namespace(testbed, layout):
    crds.install(layout)  # a testbed started before `up` installed them
    testbed.core.create_namespace({"metadata": {"name": NAMESPACE}})
    yield NAMESPACE
    testbed.core.delete_namespace(NAMESPACE)


def chart_pod_monitor(layout: Layout) -> dict:
    """The chart's templates/podmonitor.yaml as helm renders it where the monitoring.coreos.com/v1 API exists."""
    helm = layout.binaries(("helm",))["helm"]
    values = {"gitlabUrl": "http://gitlab.example/", "metrics": {
        "enabled": True, "portName": "metrics", "port": 9252,
        "podMonitor": {"enabled": True, "relabelings": RELABELINGS}}}
    rendered = subprocess.run(
        [str(helm), "template", RELEASE, str(layout.charts_dir / f"{CHART}.tgz"), "-n", NAMESPACE,
         "--api-versions", "monitoring.coreos.com/v1", "--show-only", "templates/podmonitor.yaml",
         "-f", "-"], input=yaml.safe_dump(values), capture_output=True, text=True, check=True).stdout
    return yaml.safe_load(rendered)


def apply(manifest: dict) -> subprocess.CompletedProcess:
    return subprocess.run([kubectl_binary(), "--kubeconfig", str(Layout.from_environment().kubeconfig),
                           "apply", "-f", "-"], input=yaml.safe_dump(manifest), capture_output=True, text=True,
                          check=False)


def test_the_crds_are_established(testbed):
    for name in ("podmonitors.monitoring.coreos.com", "prometheusrules.monitoring.coreos.com"):
        assert crds.established(testbed.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name)), name


def test_the_charts_podmonitor_is_accepted_and_a_broken_one_refused(namespace, layout):
    monitor = chart_pod_monitor(layout)
    assert monitor["kind"] == "PodMonitor"
    applied = apply(monitor)
    assert applied.returncode == 0, applied.stderr
    broken = yaml.safe_load(yaml.safe_dump(monitor))
    broken["metadata"]["name"] = "broken"
    broken["spec"]["podMetricsEndpoints"][0].update(scheme="ftp")
    broken["spec"]["podMetricsEndpoints"][0]["relabelings"][0]["action"] = "explode"
    refused = apply(broken)
    assert refused.returncode != 0
    assert 'scheme: Unsupported value: "ftp"' in refused.stderr, refused.stderr
    assert 'action: Unsupported value: "explode"' in refused.stderr, refused.stderr


def pod(name: str, labels: dict, port_name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE, "labels": labels},
            "spec": {"nodeName": "cpu-0", "containers": [{
                "name": "gitlab-runner", "image": "gpuci.local/testbed/gitlab-runner:absent",
                "ports": [{"name": port_name, "containerPort": 9252}]}]}}


@pytest.fixture(scope="module")
def prom(testbed, namespace, layout):
    pool_labels = {"gpuci.runners/pool": "l40s", "gpuci.runners/gpu-class": "l40s"}
    for manifest in (pod("manager", dict(CHART_POD_LABELS, **pool_labels), "metrics"),
                     pod("other-release", dict(CHART_POD_LABELS, release="other", **pool_labels), "metrics"),
                     pod("other-port", dict(CHART_POD_LABELS, **pool_labels), "web")):
        try:
            testbed.core.create_namespaced_pod(NAMESPACE, manifest)
        except ApiException as err:
            if err.status != 409:
                raise
    started_here = not processes.is_running(layout, prometheus.NAME)
    client = prometheus.start(layout)
    yield client
    if started_here:
        prometheus.stop(layout)


def test_promtool_passes_the_generated_configuration(prom, layout):
    assert f"podMonitor/{NAMESPACE}/{RELEASE}/0" in prometheus.job_names(layout)
    check = prometheus.check_config(layout, prometheus.config_file(layout))
    assert check.returncode == 0, check.stdout + check.stderr


def test_discovery_finds_the_selected_pod_with_the_rules_labels(prom):
    expected = {"job": "gpuci-gitlab-runner", "pool": "l40s", "gpu_class": "l40s", "namespace": NAMESPACE,
                "pod": "manager", "container": "gitlab-runner", "endpoint": "metrics"}

    def ours():
        return [t for t in prom.targets() if t["scrapePool"] == f"podMonitor/{NAMESPACE}/{RELEASE}/0"]
    prometheus.wait_until("the manager pod's target", lambda: bool(ours()), 60)
    (target,) = ours()  # neither the other release's pod nor the pod without a metrics port
    assert {k: v for k, v in target["labels"].items() if k != "instance"} == expected
    assert target["labels"]["instance"].endswith(":9252")
