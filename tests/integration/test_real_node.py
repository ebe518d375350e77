# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The testbed's real node runs containers: kubelet, containerd, runc and CNI for real.

Everything here happens in real processes on this machine: the pod gets an
address on the node's bridge, its logs travel kubelet -> API server, it
reaches the API server the in-cluster way, a privileged container gets its
capabilities (through the test-harness runc wrapper on VMs that need it).
"""
from __future__ import annotations

import ipaddress
import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "testbed"))

from lib.images import BASE_IMAGE  # noqa: E402
from lib.layout import REAL_NODE, Layout  # noqa: E402
from lib.node import REAL_NODE_LABEL, REAL_NODE_PLACEMENT, REAL_NODE_TAINT  # noqa: E402

NAMESPACE = "testbed-real-node"
# Reads the pod's service account token and asks the API server, at the
# address every in-cluster client uses, for its version.
IN_CLUSTER_PROBE = """
import json, os, ssl, urllib.request
sa = "/var/run/secrets/kubernetes.io/serviceaccount"
ctx = ssl.create_default_context(cafile=sa + "/ca.crt")
url = "https://%s:%s/version" % (os.environ["KUBERNETES_SERVICE_HOST"], os.environ["KUBERNETES_SERVICE_PORT"])
req = urllib.request.Request(url, headers={"Authorization": "Bearer " + open(sa + "/token").read()})
print("in-cluster version:", json.load(urllib.request.urlopen(req, context=ctx, timeout=10))["gitVersion"])
"""


def _finished(pod: dict) -> bool:
    return pod.get("status", {}).get("phase") in ("Succeeded", "Failed")


@pytest.fixture(scope="module")
def namespace(testbed):
    testbed.core.create_namespace({"metadata": {"name": NAMESPACE}})
    yield NAMESPACE
    testbed.core.delete_namespace(NAMESPACE)


def _run(testbed, namespace: str, command: list[str], **spec) -> tuple[dict, str]:
    """Run one container to completion on the real node; return the pod and its log."""
    name = f"probe-{uuid.uuid4().hex[:8]}"
    container = {"name": "probe", "image": BASE_IMAGE, "imagePullPolicy": "Never", "command": command,
                 **spec.pop("container", {})}
    testbed.apply_pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
                       "spec": {"restartPolicy": "Never", "containers": [container], **REAL_NODE_PLACEMENT, **spec}})
    pod = testbed.wait_pod(name, namespace, _finished, timeout=90)
    log = testbed.core.read_namespaced_pod_log(name, namespace)
    return pod, log


def test_real_node_is_ready_labelled_and_tainted(testbed):
    node = testbed.core.read_node(REAL_NODE)
    assert node.metadata.labels[REAL_NODE_LABEL] == "true"
    assert "kwok.x-k8s.io/node" not in (node.metadata.annotations or {})
    assert any(t.key == REAL_NODE_TAINT["key"] and t.effect == "NoSchedule" for t in node.spec.taints)
    assert [c.status for c in node.status.conditions if c.type == "Ready"] == ["True"]
    assert node.status.node_info.container_runtime_version.startswith("containerd://2.")


def test_a_container_runs_and_its_log_reaches_the_api_server(testbed, namespace):
    pod, log = _run(testbed, namespace, ["sh", "-c", "echo hello from $(hostname); cat /etc/debian_version"])
    assert pod["status"]["phase"] == "Succeeded", pod["status"]
    assert pod["spec"]["nodeName"] == REAL_NODE
    assert ipaddress.ip_address(pod["status"]["podIP"]) in ipaddress.ip_network(Layout.from_environment().pod_subnet)
    assert "hello from probe-" in log
    assert log.splitlines()[1].startswith("12.")


def test_a_failing_container_reports_its_exit_code(testbed, namespace):
    pod, log = _run(testbed, namespace, ["sh", "-c", "echo about to fail; exit 7"])
    assert pod["status"]["phase"] == "Failed"
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["exitCode"] == 7
    assert "about to fail" in log


def test_pods_reach_the_api_server_in_cluster(testbed, namespace):
    pod, log = _run(testbed, namespace, ["python3", "-c", IN_CLUSTER_PROBE])
    assert pod["status"]["phase"] == "Succeeded", log
    assert "in-cluster version: v1." in log


def test_privileged_only_where_asked(testbed, namespace):
    caps = ["sh", "-c", "grep CapEff /proc/self/status"]
    plain = _run(testbed, namespace, caps)[1]
    pod, privileged = _run(testbed, namespace, caps, container={"securityContext": {"privileged": True}})
    assert pod["status"]["phase"] == "Succeeded", privileged
    plain_caps = int(plain.split()[-1], 16)
    privileged_caps = int(privileged.split()[-1], 16)
    cap_sys_admin = 1 << 21
    assert not plain_caps & cap_sys_admin
    assert privileged_caps & cap_sys_admin


def test_host_network_pods_see_the_node_bridge(testbed, namespace):
    pod, log = _run(testbed, namespace, ["sh", "-c", "cat /proc/net/dev"], hostNetwork=True)
    assert pod["status"]["phase"] == "Succeeded"
    assert Layout.from_environment().node_bridge in log


def test_pods_without_the_toleration_never_land_on_the_real_node(testbed, namespace):
    name = f"untolerated-{uuid.uuid4().hex[:6]}"
    testbed.apply_pod({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace},
                       "spec": {"nodeSelector": {REAL_NODE_LABEL: "true"},
                                "containers": [{"name": "c", "image": BASE_IMAGE}]}})
    pod = testbed.wait_pod(name, namespace, lambda p: any(
        c.get("reason") == "Unschedulable" for c in p.get("status", {}).get("conditions") or []), timeout=30)
    assert "untolerated taint" in str(pod["status"]["conditions"])
