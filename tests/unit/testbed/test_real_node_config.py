# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The real node's configuration: everything under the state folder, nothing on public ports."""
import tomllib
from pathlib import Path

from lib import node
import pytest

from lib.layout import Layout

LAYOUT = Layout(state=Path("/tmp/state"), charts_dir=Path("/charts"), apiserver_port=16443, etcd_port=12379,
                chart_repo_port=18879)
BINS = {name: Path(f"/cache/bin/{name}") for name in ("bridge", "host-local", "loopback", "runc")}


def test_containerd_keeps_everything_under_the_state_folder():
    config = tomllib.loads(node.containerd_config(LAYOUT, BINS, Path("/cache/bin/runc"), "registry.k8s.io/pause:3"))
    assert config["version"] == 3
    for key in ("root", "state", "temp"):
        assert config[key].startswith("/tmp/state/node/")
    assert config["grpc"]["address"] == "/tmp/state/node/containerd/containerd.sock"
    runtime = config["plugins"]["io.containerd.cri.v1.runtime"]
    assert runtime["netns_mounts_under_state_dir"] is True
    assert runtime["containerd"]["runtimes"]["runc"]["options"] == {"BinaryName": "/cache/bin/runc",
                                                                    "SystemdCgroup": False}
    assert config["plugins"]["io.containerd.cri.v1.images"]["pinned_images"]["sandbox"] == "registry.k8s.io/pause:3"


def test_kubelet_listens_on_the_bridge_and_loopback_only():
    config = node.kubelet_config(LAYOUT)
    assert config["address"] == "10.89.0.1"
    assert config["healthzBindAddress"] == "127.0.0.1"
    assert config["readOnlyPort"] == 0
    assert config["port"] not in (10250, 10255)
    assert config["authentication"]["anonymous"]["enabled"] is False
    assert config["cgroupDriver"] == "cgroupfs"
    assert config["cgroupRoot"] == "/"
    assert config["registerWithTaints"] == [node.REAL_NODE_TAINT]


def test_cni_hands_out_addresses_on_the_node_bridge():
    plugin = node.cni_config(LAYOUT)["plugins"][0]
    assert plugin["type"] == "bridge" and plugin["ipMasq"] is False
    assert plugin["bridge"] == "gpuci0"
    assert plugin["ipam"]["ranges"][0][0] == {"subnet": "10.89.0.0/24", "gateway": "10.89.0.1"}


# --- testbeds side by side: instance N shares nothing mutable with instance 0 ------------------

def instance(monkeypatch, number: int | None, **variables: str) -> Layout:
    for name in ("GPUCI_TESTBED_INSTANCE", "GPUCI_TESTBED_STATE", "GPUCI_TESTBED_APISERVER_PORT",
                 "GPUCI_TESTBED_ETCD_PORT", "GPUCI_CHART_REPO_PORT", "GPUCI_PROMETHEUS_PORT"):
        monkeypatch.delenv(name, raising=False)
    if number is not None:
        monkeypatch.setenv("GPUCI_TESTBED_INSTANCE", str(number))
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    return Layout.from_environment()


def endpoints(layout: Layout) -> dict:
    """Everything of a testbed that a second one on the same machine must not share."""
    return {"state": layout.state, "apiserver": layout.apiserver_port, "etcd": layout.etcd_port,
            "etcd peer": layout.etcd_port + 1, "kubelet": layout.kubelet_port,
            "kubelet healthz": layout.kubelet_port + 1, "charts": layout.chart_repo_port,
            "prometheus": layout.prometheus_port, "bridge": layout.node_bridge, "node ip": layout.real_node_ip,
            "pods": layout.pod_subnet, "services": layout.service_cidr, "service host": layout.service_host,
            "gitlab": layout.gitlab_standin_url, "cgroup root": layout.cgroup_root}


def test_the_default_instance_keeps_the_documented_addresses(monkeypatch):
    layout = instance(monkeypatch, None)
    assert layout.instance == 0 and layout.state.name == ".testbed"
    assert (layout.apiserver_port, layout.etcd_port, layout.chart_repo_port, layout.prometheus_port) == \
        (16443, 12379, 18879, 19090)
    assert (layout.node_bridge, layout.real_node_ip, layout.service_host) == ("gpuci0", "10.89.0.1", "10.96.0.1")
    assert layout.gitlab_standin_url == "http://10.89.0.1:18880"


@pytest.mark.parametrize("first, second", [(0, 1), (1, 2), (2, 3)])
def test_two_instances_share_no_port_address_folder_or_cgroup(monkeypatch, first, second):
    one, two = endpoints(instance(monkeypatch, first)), endpoints(instance(monkeypatch, second))
    shared = {name for name in one if one[name] == two[name]}
    assert not shared, shared
    ports = [v for v in list(one.values()) + list(two.values()) if isinstance(v, int)]
    assert len(ports) == len(set(ports)), "a port of one instance is another's"


def test_an_explicit_variable_still_wins_over_the_instance(monkeypatch):
    layout = instance(monkeypatch, 2, GPUCI_TESTBED_APISERVER_PORT="17443")
    assert layout.apiserver_port == 17443 and layout.etcd_port == 12379 + 20


def test_client_environment_points_inventories_at_the_instance(monkeypatch):
    env = instance(monkeypatch, 1).client_environment()
    assert env["GPUCI_GITLAB_STANDIN_URL"] == "http://10.89.1.1:18880"
    assert env["GPUCI_CHART_REPO_URL"] == "http://127.0.0.1:18889"
    assert env["GPUCI_KUBECONFIG"].endswith(".testbed-1/kubeconfig")


def test_a_second_instance_has_its_own_cgroup_root(monkeypatch):
    layout = instance(monkeypatch, 1)
    assert node.kubelet_config(layout)["cgroupRoot"] == "/gpuci-testbed-1"
    assert node.kubelet_config(layout)["address"] == "10.89.1.1"


def test_bounding_set_detection_reads_cap_sys_resource(monkeypatch, tmp_path):
    status = tmp_path / "status"
    monkeypatch.setattr(node, "Path", lambda p: status if p == "/proc/self/status" else Path(p))
    status.write_text("CapBnd:\t000001fffeffffff\n")  # these VMs: bit 24 missing
    assert node.bounding_set_lacks_sys_resource() is True
    status.write_text("CapBnd:\t000001ffffffffff\n")
    assert node.bounding_set_lacks_sys_resource() is False
