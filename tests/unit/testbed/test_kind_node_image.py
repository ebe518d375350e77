# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The kind harness's node image recipe (tools/kind/node_image.py) and what the kind scenario expects of it.

Building the image needs Docker and takes a minute (tests/docker/test_kind.py
does it); these tests check the recipe's pure parts and that the scenario,
the harness's vars and the image agree on image references.
"""
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tools" / "kind"))
import node_image  # noqa: E402
from lib.images import BASE_IMAGE, PAUSE_IMAGE, pinned  # noqa: E402

KIND_CONTAINERD_CONFIG = '''version = 2
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:3.10"
  restrict_oom_score_adj = false
'''


def test_containerd_config_gets_kubeadms_pause_and_restricted_oom_score_adj():
    config = node_image._containerd_config(KIND_CONTAINERD_CONFIG)
    assert f'sandbox_image = "{PAUSE_IMAGE}"' in config
    assert "restrict_oom_score_adj = true" in config
    assert "pause:3.10\"" not in config


def test_containerd_config_refuses_a_changed_shape_instead_of_ignoring_it():
    with pytest.raises(SystemExit, match="changed shape"):
        node_image._containerd_config('version = 2\nsandbox_image = "registry.k8s.io/pause:3.9"\n')


def test_reference_follows_the_recipe(tmp_path, monkeypatch):
    first = node_image.reference()
    assert first == node_image.reference()  # stable for one checkout
    assert first.startswith(f"{node_image.REPOSITORY}:{pinned('KUBERNETES_VERSION')}-")
    monkeypatch.setattr(node_image, "PACKAGES", node_image.PACKAGES + ("strace",))
    assert node_image.reference() != first


def test_control_plane_images_are_the_references_kubeadm_asks_for():
    # cmd/kubeadm/app/constants of KUBERNETES_VERSION: etcd 3.6.5-0, CoreDNS v1.12.1 for 1.34.
    assert node_image.ETCD_IMAGE == f"registry.k8s.io/etcd:{pinned('KIND_ETCD_VERSION').lstrip('v')}-0"
    assert node_image.COREDNS_IMAGE == f"registry.k8s.io/coredns/coredns:{pinned('KIND_COREDNS_VERSION')}"


def test_the_scenario_and_the_harness_name_images_the_node_image_holds():
    simulate = yaml.safe_load((REPO / "molecule/kind/inventory/group_vars/all/simulate.yml").read_text())
    assert simulate["gpuci_kind_kwok_image"] == node_image.KWOK_IMAGE
    harness = yaml.safe_load((REPO / "tools/kind/harness-vars.yml").read_text())
    assert set(harness["gpu_canary_images"].values()) == {BASE_IMAGE}


def test_the_pod_network_manifest_names_the_network_image_once_written(tmp_path):
    manifest = (REPO / "tools/kind/node/default-cni.yaml").read_text()
    assert "@NETWORK_IMAGE@" in manifest
    written = yaml.safe_load(manifest.replace("@NETWORK_IMAGE@", node_image.NETWORK_IMAGE)
                             .replace("{{ .PodSubnet }}", "10.244.0.0/16"))
    daemonset = next(item for item in written["items"] if item["kind"] == "DaemonSet")
    (container,) = daemonset["spec"]["template"]["spec"]["containers"]
    assert container["image"] == node_image.NETWORK_IMAGE
    # Only what routing needs: the host network and NET_ADMIN, not privileged.
    assert container["securityContext"] == {"capabilities": {"add": ["NET_ADMIN"]}}


def test_our_coredns_builds_the_pinned_coredns():
    """tools/testbed/coredns pins the CoreDNS kubeadm asks for (its cache key: test_own_go_tools)."""
    go_mod = (node_image.TOOLS_DIR / "testbed" / "coredns" / "go.mod").read_text()
    assert f"github.com/coredns/coredns {pinned('KIND_COREDNS_VERSION')}\n" in go_mod


def test_the_node_takes_each_binary_from_the_folder_build_sh_names(tmp_path, monkeypatch):
    """The kind harness's etcd and CoreDNS, not the testbed's etcd; the rest the testbed's own builds."""
    asked = []

    def bin_dirs(*components):
        asked.extend(components)
        return [tmp_path / component for component in components]

    monkeypatch.setattr(node_image, "component_bin_dirs", bin_dirs)
    with pytest.raises(SystemExit, match="missing binaries"):
        node_image._binaries()  # pylint: disable=protected-access
    for component, binaries in {"kubernetes": ["kubernetes"], "containerd": ["containerd", "containerd-shim-runc-v2", "ctr"],
                                "runc": ["runc"], "cni": ["bridge", "host-local", "loopback"], "etcd-kind": ["etcd"],
                                "kwok": ["kwok"], "coredns-kind": ["coredns"]}.items():
        for binary in binaries:
            (tmp_path / component).mkdir(exist_ok=True)
            (tmp_path / component / binary).write_text("")
    found = node_image._binaries()  # pylint: disable=protected-access
    assert found["etcd"] == tmp_path / "etcd-kind" / "etcd"
    assert found["coredns"] == tmp_path / "coredns-kind" / "coredns"
    assert found["kubernetes"] == tmp_path / "kubernetes" / "kubernetes"
    assert set(asked) == {"kubernetes", "containerd", "runc", "cni", "etcd-kind", "kwok", "coredns-kind"}
