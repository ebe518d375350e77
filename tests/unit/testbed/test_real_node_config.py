# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The real node's configuration: everything under the state folder, nothing on public ports."""
import tomllib
from pathlib import Path

from lib import node
from lib.layout import REAL_NODE_IP, Layout

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
    assert config["address"] == REAL_NODE_IP
    assert config["healthzBindAddress"] == "127.0.0.1"
    assert config["readOnlyPort"] == 0
    assert config["port"] not in (10250, 10255)
    assert config["authentication"]["anonymous"]["enabled"] is False
    assert config["cgroupDriver"] == "cgroupfs"
    assert config["registerWithTaints"] == [node.REAL_NODE_TAINT]


def test_cni_hands_out_addresses_on_the_node_bridge():
    plugin = node.cni_config()["plugins"][0]
    assert plugin["type"] == "bridge" and plugin["ipMasq"] is False
    assert plugin["ipam"]["ranges"][0][0]["gateway"] == REAL_NODE_IP


def test_bounding_set_detection_reads_cap_sys_resource(monkeypatch, tmp_path):
    status = tmp_path / "status"
    monkeypatch.setattr(node, "Path", lambda p: status if p == "/proc/self/status" else Path(p))
    status.write_text("CapBnd:\t000001fffeffffff\n")  # these VMs: bit 24 missing
    assert node.bounding_set_lacks_sys_resource() is True
    status.write_text("CapBnd:\t000001ffffffffff\n")
    assert node.bounding_set_lacks_sys_resource() is False
