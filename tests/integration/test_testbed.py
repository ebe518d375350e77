# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The testbed is real: a built API server, a real scheduler, real capacity limits.

Simulated by kwok: the nodes and the containers (pods are marked Running, no
process runs). Scheduling, admission and API behaviour are real.
"""
from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path

import pytest
from kubernetes import client

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "testbed"))

from lib.layout import REPO_ROOT  # noqa: E402

NAMESPACE = "testbed-smoke"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def _pinned_version() -> str:
    for line in (REPO_ROOT / "tools" / "testbed" / "versions.env").read_text().splitlines():
        if line.startswith("KUBERNETES_VERSION="):
            return line.split("=", 1)[1]
    raise AssertionError("KUBERNETES_VERSION missing from versions.env")


@pytest.fixture(scope="module")
def namespace(testbed):
    testbed.core.create_namespace({"metadata": {"name": NAMESPACE}})
    yield NAMESPACE
    testbed.core.delete_namespace(NAMESPACE)


def _gpu_pod(gpus: int, tolerate: bool) -> dict:
    name = f"gpu-{gpus}-{'tol' if tolerate else 'notol'}-{uuid.uuid4().hex[:6]}"
    spec = {
        "containers": [{"name": "cuda", "image": "nvidia/cuda:12.4.1-base-ubuntu22.04",
                        "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}],
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L40S"},
    }
    if tolerate:
        spec["tolerations"] = [GPU_TOLERATION]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NAMESPACE}, "spec": spec}


def _unschedulable(pod: dict) -> bool:
    return any(c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
               for c in pod.get("status", {}).get("conditions") or [])


def test_apiserver_reports_the_built_version(testbed):
    assert client.VersionApi(testbed.api_client).get_code().git_version == _pinned_version()


def test_simulated_nodes_are_ready_and_labelled(testbed):
    nodes = {n.metadata.name: n for n in testbed.core.list_node().items}
    assert {"cpu-0", "cpu-1", "gpu-l40s-0", "gpu-a100-0", "gpu-a10-0", "dri-0"} <= set(nodes)
    l40s = nodes["gpu-l40s-0"]
    assert l40s.status.allocatable["nvidia.com/gpu"] == "4"
    assert l40s.metadata.labels["nvidia.com/gpu.product"] == "NVIDIA-L40S"
    assert any(t.key == "nvidia.com/gpu" and t.effect == "NoSchedule" for t in l40s.spec.taints)
    assert nodes["gpu-a100-0"].status.allocatable["nvidia.com/mig-1g.10gb"] == "7"
    for node in nodes.values():
        ready = [c for c in node.status.conditions if c.type == "Ready"]
        assert ready and ready[0].status == "True", node.metadata.name


def test_deployment_gets_running_pods(testbed, namespace):
    testbed.apps.create_namespaced_deployment(namespace, {
        "metadata": {"name": "web"},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                 "template": {"metadata": {"labels": {"app": "web"}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = testbed.apps.read_namespaced_deployment("web", namespace).status
        if (status.available_replicas or 0) == 2:
            break
        time.sleep(0.5)
    assert (status.available_replicas or 0) == 2
    pods = testbed.core.list_namespaced_pod(namespace, label_selector="app=web").items
    assert {p.status.phase for p in pods} == {"Running"}
    # CPU pods never land on tainted GPU or dri nodes.
    assert {p.spec.node_name for p in pods} <= {"cpu-0", "cpu-1"}


def test_gpu_pod_with_toleration_lands_on_l40s(testbed, namespace):
    pod = testbed.apply_pod(_gpu_pod(1, tolerate=True))
    name = pod["metadata"]["name"]
    pod = testbed.wait_pod(name, namespace, lambda p: p.get("status", {}).get("phase") == "Running")
    assert pod["spec"]["nodeName"] == "gpu-l40s-0"
    assert pod["status"]["phase"] == "Running"


def test_gpu_pod_without_toleration_stays_pending(testbed, namespace):
    name = testbed.apply_pod(_gpu_pod(1, tolerate=False))["metadata"]["name"]
    pod = testbed.wait_pod(name, namespace, _unschedulable, timeout=30)
    assert pod["status"]["phase"] == "Pending"
    assert _unschedulable(pod)
    assert "untolerated taint" in " ".join(c.get("message", "") for c in pod["status"]["conditions"])


def test_capacity_is_real(testbed, namespace):
    name = testbed.apply_pod(_gpu_pod(5, tolerate=True))["metadata"]["name"]
    pod = testbed.wait_pod(name, namespace, _unschedulable, timeout=30)
    assert pod["status"]["phase"] == "Pending"
    assert "Insufficient nvidia.com/gpu" in " ".join(c.get("message", "") for c in pod["status"]["conditions"])


def test_job_pods_complete(testbed, namespace):
    batch = client.BatchV1Api(testbed.api_client)
    batch.create_namespaced_job(namespace, {
        "metadata": {"name": "once"},
        "spec": {"backoffLimit": 0, "template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}]}}}})
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = batch.read_namespaced_job("once", namespace).status
        if status.succeeded:
            break
        time.sleep(0.5)
    assert status.succeeded == 1
