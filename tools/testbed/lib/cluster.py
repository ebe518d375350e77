# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The control plane's command lines, kubeconfigs, simulated nodes and readiness waits."""
from __future__ import annotations

import sys
import time
import urllib.request
from pathlib import Path

import yaml

from .api import ApiClient
from .layout import TOOLS_DIR, Layout

NODES_FILE = TOOLS_DIR / "nodes.yaml"
# kwok manages only the nodes carrying this annotation (never a real node).
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
SIMULATED_LABEL = "gpuci.runners/simulated"


def _kubeconfig(layout: Layout, component: str) -> dict:
    token = (layout.pki / f"{component}.token").read_text().strip()
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": "gpuci-testbed",
        "clusters": [{"name": "gpuci-testbed", "cluster": {
            "server": layout.apiserver_url, "certificate-authority": str(layout.pki / "ca.crt")}}],
        "users": [{"name": component, "user": {"token": token}}],
        "contexts": [{"name": "gpuci-testbed", "context": {"cluster": "gpuci-testbed", "user": component}}],
    }


def write_kubeconfigs(layout: Layout) -> None:
    for component in ("controller-manager", "scheduler", "kwok"):
        path = layout.component_kubeconfig(component)
        path.write_text(yaml.safe_dump(_kubeconfig(layout, component)))
        path.chmod(0o600)
    layout.kubeconfig.write_text(yaml.safe_dump(_kubeconfig(layout, "admin")))
    layout.kubeconfig.chmod(0o600)


def server_commands(layout: Layout, bins: dict[str, Path]) -> list[tuple[str, list[str]]]:
    """Command lines in start order. Every listener is bound to 127.0.0.1."""
    pki, etcd_url = layout.pki, f"http://127.0.0.1:{layout.etcd_port}"
    peer_url = f"http://127.0.0.1:{layout.etcd_port + 1}"
    return [
        ("etcd", [str(bins["etcd"]), "--name=testbed", f"--data-dir={layout.etcd_data}",
                  f"--listen-client-urls={etcd_url}", f"--advertise-client-urls={etcd_url}",
                  f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
                  f"--initial-cluster=testbed={peer_url}", "--unsafe-no-fsync", "--log-level=warn"]),
        ("kube-apiserver", [
            str(bins["kube-apiserver"]), f"--etcd-servers={etcd_url}",
            "--bind-address=127.0.0.1", "--advertise-address=127.0.0.1", f"--secure-port={layout.apiserver_port}",
            f"--tls-cert-file={pki / 'apiserver.crt'}", f"--tls-private-key-file={pki / 'apiserver.key'}",
            f"--client-ca-file={pki / 'ca.crt'}", f"--token-auth-file={pki / 'tokens.csv'}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={pki / 'sa.pub'}", f"--service-account-signing-key-file={pki / 'sa.key'}",
            f"--service-cluster-ip-range={layout.service_cidr}", "--authorization-mode=Node,RBAC",
            "--allow-privileged=true", "--enable-admission-plugins=NodeRestriction,RuntimeClass,PodSecurity",
            # Logs and exec reach the real node's kubelet at its InternalIP, with a
            # client certificate the kubelet checks and a serving certificate we check.
            f"--kubelet-client-certificate={pki / 'apiserver-kubelet-client.crt'}",
            f"--kubelet-client-key={pki / 'apiserver-kubelet-client.key'}",
            f"--kubelet-certificate-authority={pki / 'ca.crt'}",
            "--kubelet-preferred-address-types=InternalIP,Hostname",
            "--profiling=false", "--v=1"]),
        ("kube-controller-manager", [
            str(bins["kube-controller-manager"]),
            f"--kubeconfig={layout.component_kubeconfig('controller-manager')}",
            f"--authentication-kubeconfig={layout.component_kubeconfig('controller-manager')}",
            f"--authorization-kubeconfig={layout.component_kubeconfig('controller-manager')}",
            "--bind-address=127.0.0.1", "--secure-port=0", "--leader-elect=false",
            "--use-service-account-credentials=true", f"--service-account-private-key-file={pki / 'sa.key'}",
            f"--root-ca-file={pki / 'ca.crt'}", f"--cluster-signing-cert-file={pki / 'ca.crt'}",
            f"--cluster-signing-key-file={pki / 'ca.key'}", f"--service-cluster-ip-range={layout.service_cidr}",
            # No cloud, no real kubelets: these controllers have nothing to do here.
            "--controllers=*,-nodeipam,-service-lb-controller,-cloud-node-lifecycle,-persistentvolume-expander",
            # A simulated node has no kubelet: once the node controller marks its
            # pods NotReady (after the API server was gone longer than the grace
            # period, as the fault tests make it), kwok never reports them Ready
            # again, where a real kubelet would. The grace period outlasts the
            # testbed's outages (one failing run, then the watches resuming).
            "--node-monitor-grace-period=5m",
            "--v=1"]),
        ("kube-scheduler", [
            str(bins["kube-scheduler"]), f"--kubeconfig={layout.component_kubeconfig('scheduler')}",
            f"--authentication-kubeconfig={layout.component_kubeconfig('scheduler')}",
            f"--authorization-kubeconfig={layout.component_kubeconfig('scheduler')}",
            "--bind-address=127.0.0.1", "--secure-port=0", "--leader-elect=false", "--v=1"]),
        ("kwok", [
            str(bins["kwok"]), f"--kubeconfig={layout.component_kubeconfig('kwok')}",
            "--manage-all-nodes=false", f"--manage-nodes-with-annotation-selector={KWOK_ANNOTATION}=fake",
            "--node-ip=127.0.0.1", "--cidr=10.244.0.1/16", "--node-lease-duration-seconds=40"]),
        ("chart-repo", [
            sys.executable, "-m", "http.server", "--bind", "127.0.0.1", "--directory", str(layout.charts_dir),
            str(layout.chart_repo_port)]),
    ]


def wait_for(what: str, probe, started: float, timeout: float = 120) -> None:
    """Poll until probe() is true; say what is awaited every few seconds."""
    deadline, last_said = time.monotonic() + timeout, 0.0
    while not probe():
        now = time.monotonic()
        if now > deadline:
            raise SystemExit(f"testbed: gave up waiting for {what} after {timeout:.0f}s")
        if now - last_said >= 5:
            print(f"testbed: waiting for {what} ({now - started:.0f}s since start)", flush=True)
            last_said = now
        time.sleep(0.3)


def wait_etcd(layout: Layout) -> None:
    def probe():
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{layout.etcd_port}/health", timeout=2) as resp:
                return b'"true"' in resp.read()
        except OSError:
            return False
    wait_for("etcd health", probe, time.monotonic(), timeout=60)


def wait_apiserver(layout: Layout, started: float) -> None:
    api = ApiClient(layout)
    wait_for("kube-apiserver /readyz", api.healthy, started)


def node_objects() -> list[dict]:
    spec = yaml.safe_load(NODES_FILE.read_text())
    base = spec["common"]
    objects = []
    for node in spec["nodes"]:
        resources = {"cpu": base["cpu"], "memory": base["memory"], "pods": base["pods"], **node.get("resources", {})}
        labels = {"kubernetes.io/hostname": node["name"], "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                  "type": "kwok", SIMULATED_LABEL: "true", **node.get("labels", {})}
        objects.append({
            "apiVersion": "v1", "kind": "Node",
            "metadata": {"name": node["name"], "labels": labels, "annotations": {KWOK_ANNOTATION: "fake"}},
            "spec": {"taints": node.get("taints", [])},
            "status": {"capacity": resources, "allocatable": resources},
        })
    return objects


def create_nodes(layout: Layout) -> None:
    api = ApiClient(layout)
    for node in node_objects():
        api.request("POST", "/api/v1/nodes", node)


def _all_nodes_ready(api: ApiClient, expected: int) -> bool:
    nodes = api.get("/api/v1/nodes")["items"]
    ready = [n for n in nodes if any(c["type"] == "Ready" and c["status"] == "True"
                                     for c in n.get("status", {}).get("conditions", []))]
    return len(ready) >= expected


def _default_service_account(api: ApiClient) -> bool:
    try:
        api.get("/api/v1/namespaces/default/serviceaccounts/default")
        return True
    except OSError:
        return False


def _chart_repo(layout: Layout) -> bool:
    try:
        with urllib.request.urlopen(layout.chart_repo_url + "/index.yaml", timeout=2) as resp:
            return resp.status == 200
    except OSError:
        return False


def wait_ready(layout: Layout, started: float) -> None:
    api = ApiClient(layout)
    expected = len(node_objects())
    wait_for(f"{expected} simulated nodes Ready", lambda: _all_nodes_ready(api, expected), started)
    wait_for("the default service account (controller-manager)", lambda: _default_service_account(api), started)
    wait_for(f"chart repository {layout.chart_repo_url}", lambda: _chart_repo(layout), started)


def version(layout: Layout) -> str:
    info = ApiClient(layout).get("/version")
    return f"Kubernetes {info['gitVersion']} (real control plane)"


def node_kinds(layout: Layout) -> list[tuple[str, str]]:
    """(node, 'real' or 'simulated') for every node, as reports print them."""
    nodes = ApiClient(layout).get("/api/v1/nodes")["items"]
    return [(n["metadata"]["name"], "simulated" if KWOK_ANNOTATION in n["metadata"].get("annotations", {}) else "real")
            for n in nodes]
