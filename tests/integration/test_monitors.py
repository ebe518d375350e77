# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The runner pools' metrics and PodMonitors against the testbed, with the Prometheus Operator's PodMonitor CRD.

One converge of a small fleet of its own (a GPU pool and a CPU pool), one
rerun, one removal: each pool's release serves its manager's metrics and
makes the chart's PodMonitor, relabelled to the alert rules' SCRAPE_LABELS
and labelled for the user's Prometheus to select; a rerun changes nothing;
``state: absent`` leaves no PodMonitor. ``gitlab_runner_pod_monitors: on``
on a cluster without the CRD is refused before any change: the shared
testbed keeps its CRD, so that path is unit-tested
(tests/unit/plugins/action/test_fleet_decide.py).
"""
from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import yaml

from helpers import REPO_ROOT

from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.alert_rules import SCRAPE_LABELS

PLAYBOOK = "gitlab_runner.yml"
FLEET = "gitlab-runner-monitors"
MANAGER_NS = "gitlab-runner-monitors"
JOBS_NS = "gitlab-runner-monitors-jobs"
FLEET_SELECTOR = f"app.kubernetes.io/part-of=gpuci-runners,gpuci.runners/fleet={FLEET}"
MONITORING = "monitoring.coreos.com/v1"
POD_MONITOR_CRD = Path(REPO_ROOT).parent / "shared" / "crds" / "prometheus-operator-v0.93.0" / \
    "monitoring.coreos.com_podmonitors.yaml"
SELECTION = {"release": "kube-prometheus-stack"}
RUN_ID = uuid.uuid4().hex[:12]
POOLS = [
    {"name": "mon-l40s", "gpu_class": "l40s", "gpus": 1, "namespace": JOBS_NS, "token": f"glrt-gpuci-mon-l40s-{RUN_ID}"},
    {"name": "mon-cpu", "namespace": JOBS_NS, "token": f"glrt-gpuci-mon-cpu-{RUN_ID}"},
]


def fleet_vars(pools, **extra) -> dict:
    return {"gitlab_runner_fleet": FLEET, "gitlab_runner_namespace": MANAGER_NS, "gitlab_runner_pools": pools,
            "gitlab_runner_pod_monitor_labels": SELECTION, **extra}


def pod_monitors(cluster) -> dict[str, dict]:
    return {monitor["metadata"]["name"]: monitor
            for monitor in cluster.list(MONITORING, "PodMonitor", namespace=MANAGER_NS)}


def leftovers(cluster) -> list[str]:
    return [o["metadata"]["name"] for o in cluster.list("v1", "Namespace", label_selector=FLEET_SELECTOR)]


@pytest.fixture(scope="module")
def monitored(testbed, playbooks):
    """The PodMonitor CRD on the testbed (installed when missing), and nothing of this fleet before or after."""
    if testbed.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "podmonitors.monitoring.coreos.com") is None:
        testbed.resource("apiextensions.k8s.io/v1", "CustomResourceDefinition").create(
            body=yaml.safe_load(POD_MONITOR_CRD.read_text()))
    teardown = fleet_vars([], gitlab_runner_state="absent")
    if leftovers(testbed):
        playbooks.run(PLAYBOOK, extra_vars=teardown).assert_ok()
    yield testbed
    if leftovers(testbed):
        playbooks.run(PLAYBOOK, extra_vars=teardown)


def test_each_pool_gets_a_pod_monitor_relabelled_to_the_scrape_labels(monitored, playbooks):
    playbooks.run(PLAYBOOK, extra_vars=fleet_vars(POOLS)).assert_ok()
    monitors = pod_monitors(monitored)
    assert sorted(monitors) == ["gitlab-runner-mon-cpu", "gitlab-runner-mon-l40s"]
    for pool in POOLS:
        monitor = monitors["gitlab-runner-" + pool["name"]]
        labels = monitor["metadata"]["labels"]
        assert labels["release"] == SELECTION["release"], "the user's selection label wins over the chart's"
        assert labels["gpuci.runners/pool"] == pool["name"]
        (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
        assert endpoint["port"] == "metrics"
        targets = {entry["targetLabel"]: entry for entry in endpoint["relabelings"]}
        assert set(targets) == {"job", SCRAPE_LABELS["pool"], SCRAPE_LABELS["gpu_class"]}
        assert targets["job"]["replacement"] == SCRAPE_LABELS["job"]
        assert targets["pool"]["sourceLabels"] == ["__meta_kubernetes_pod_label_gpuci_runners_pool"]
        assert targets["gpu_class"]["sourceLabels"] == ["__meta_kubernetes_pod_label_gpuci_runners_gpu_class"]
    # The labels the relabelings read are on the managers' pods, and the metrics port is open.
    deployment = monitored.get("apps/v1", "Deployment", "gitlab-runner-mon-l40s", MANAGER_NS)
    template = deployment["spec"]["template"]
    assert template["metadata"]["labels"]["gpuci.runners/gpu-class"] == "l40s"
    assert template["metadata"]["labels"]["gpuci.runners/pool"] == "mon-l40s"
    ports = [port for container in template["spec"]["containers"] for port in container.get("ports") or []]
    assert {"name": "metrics", "containerPort": 9252} in [
        {"name": port.get("name"), "containerPort": port["containerPort"]} for port in ports]


def test_rerun_changes_nothing(monitored, playbooks):
    run = playbooks.run(PLAYBOOK, extra_vars=fleet_vars(POOLS)).assert_ok()
    assert run.changed == 0, run.output[-4000:]


def test_state_absent_removes_the_pod_monitors(monitored, playbooks):
    playbooks.run(PLAYBOOK, extra_vars=fleet_vars(POOLS, gitlab_runner_state="absent")).assert_ok()
    assert pod_monitors(monitored) == {}
    assert leftovers(monitored) == []
