# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU mode's decisions (tools/testbed/lib/gpu.py), without a GPU: the driver found, labels, role variables."""
import os
from pathlib import Path

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import merged_classes
from lib import gpu
from lib.layout import Layout

LAYOUT = Layout(state=Path("/tmp/state"), charts_dir=Path("/charts"), apiserver_port=16443, etcd_port=12379,
                chart_repo_port=18879)
BINS = {name: Path(f"/cache/bin/{name}") for name in
        ("nvidia-ctk", "nvidia-container-runtime", "nvidia-cdi-hook", "gpuci-device-plugin")}
# What nvidia-smi --query-gpu=name,memory.total --format=csv,noheader,nounits printed on the lent H100.
H100_SMI = "NVIDIA H100 80GB HBM3, 81559\n"
BUILTIN_CLASSES = merged_classes()


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_no_control_device_means_no_gpu_and_says_which_file(tmp_path):
    found = gpu.find_host_driver(dev=tmp_path / "dev", gke_dir=tmp_path / "nvidia")
    assert found == f"no NVIDIA GPU on this machine ({tmp_path / 'dev' / 'nvidiactl'} missing)"


def test_gke_layout_points_nvidia_ctk_at_the_driver_folder(tmp_path):
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "nvidiactl").touch()
    smi = _executable(tmp_path / "usr/local/nvidia/bin/nvidia-smi")
    found = gpu.find_host_driver(dev=tmp_path / "dev", gke_dir=tmp_path / "usr/local/nvidia")
    assert found.nvidia_smi == smi
    assert found.library_dirs == (tmp_path / "usr/local/nvidia/lib64",)
    assert found.executable_dirs == (tmp_path / "usr/local/nvidia/bin",)
    assert found.dev_root == tmp_path


def test_distribution_layout_leaves_library_lookup_to_nvidia_ctk(tmp_path, monkeypatch):
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "nvidiactl").touch()
    smi = _executable(tmp_path / "usr/bin/nvidia-smi")
    monkeypatch.setenv("PATH", str(smi.parent))
    found = gpu.find_host_driver(dev=tmp_path / "dev", gke_dir=tmp_path / "usr/local/nvidia")
    assert found.nvidia_smi == smi
    assert found.library_dirs == ()


def test_control_device_without_nvidia_smi_is_explained(tmp_path, monkeypatch):
    (tmp_path / "dev").mkdir()
    (tmp_path / "dev" / "nvidiactl").touch()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    found = gpu.find_host_driver(dev=tmp_path / "dev", gke_dir=tmp_path / "usr/local/nvidia")
    assert "nvidia-smi is neither on PATH nor in" in found


@pytest.mark.parametrize("value", ["yes", "ON", ""])
def test_unknown_mode_is_refused_naming_the_variable(monkeypatch, value):
    monkeypatch.setenv("GPUCI_TESTBED_GPU", value)
    with pytest.raises(SystemExit, match="GPUCI_TESTBED_GPU"):
        gpu.mode()


def test_h100_labels_match_the_builtin_h100_class():
    labels = gpu.labels_from_smi(H100_SMI)
    assert labels["nvidia.com/gpu.product"] == BUILTIN_CLASSES["h100"]["product"]
    assert labels["nvidia.com/gpu.memory"] == str(BUILTIN_CLASSES["h100"]["memory_mib"])
    assert labels["nvidia.com/gpu.count"] == "1"
    assert labels[gpu.GFD_STAND_IN_LABEL] == "testbed"


def test_labels_count_every_gpu_listed():
    assert gpu.labels_from_smi(H100_SMI * 8)["nvidia.com/gpu.count"] == "8"


def test_a_fake_gpu_never_passes_for_a_builtin_class():
    products = {c["product"] for c in BUILTIN_CLASSES.values() if c.get("product")}
    assert gpu.fake_labels()["nvidia.com/gpu.product"] not in products
    assert gpu.fake_labels()["gpuci.runners/gpu-fake"] == "true"


def test_role_variables_keep_every_file_under_the_state_folder(tmp_path):
    layout = Layout(state=tmp_path, charts_dir=Path("/charts"), apiserver_port=16443, etcd_port=12379,
                    chart_repo_port=18879)
    (tmp_path / "node").mkdir()
    driver = gpu.Driver(nvidia_smi=Path("/usr/local/nvidia/bin/nvidia-smi"), dev_root=Path("/"),
                        library_dirs=(Path("/usr/local/nvidia/lib64"),))
    variables = gpu.toolkit_vars(layout, driver, BINS, Path("/cache/bin/runc"))
    assert variables["container_toolkit_install_packages"] is False
    assert variables["container_toolkit_restart_runtime"] is False
    for key in ("container_toolkit_runtime_config_path", "container_toolkit_config_path",
                "container_toolkit_cdi_spec_path", "container_toolkit_runtime_path"):
        assert variables[key].startswith(str(tmp_path)), key
    # The seed's GKE layout: root "/", the driver's folders searched (the measured fix).
    assert variables["container_toolkit_cdi_driver_root"] == "/"
    assert variables["container_toolkit_cdi_library_search_paths"] == ["/usr/local/nvidia/lib64"]
    assert variables["container_toolkit_cdi_executable_search_paths"] == ["/usr/local/nvidia/bin"]
    settings = variables["container_toolkit_config"]
    assert settings["nvidia-container-runtime.mode"] == "cdi"
    assert settings["nvidia-container-runtime.modes.cdi.spec-dirs"] == [str(tmp_path / "node" / "cdi")]
    assert settings["nvidia-container-runtime.runtimes"] == ["/cache/bin/runc"]


def test_fake_driver_appears_in_containers_where_a_gke_host_driver_would(tmp_path):
    driver = gpu.Driver(nvidia_smi=tmp_path / "usr/local/nvidia/bin/nvidia-smi", root=tmp_path, dev_root=tmp_path,
                        library_dirs=(tmp_path / "usr/local/nvidia/lib64",), fake=True)
    assert driver.executable_dirs == (Path("/usr/local/nvidia/bin"),)
    layout = Layout(state=tmp_path / "state", charts_dir=Path("/charts"), apiserver_port=16443, etcd_port=12379,
                    chart_repo_port=18879)
    (tmp_path / "state" / "node").mkdir(parents=True)
    variables = gpu.toolkit_vars(layout, driver, BINS, Path("/cache/bin/runc"))
    assert variables["container_toolkit_cdi_driver_root"] == str(tmp_path)
    assert variables["container_toolkit_cdi_executable_search_paths"] == ["/usr/local/nvidia/bin"]


def test_runtime_launcher_points_the_runtime_at_the_state_folder(tmp_path):
    layout = Layout(state=tmp_path, charts_dir=Path("/charts"), apiserver_port=16443, etcd_port=12379,
                    chart_repo_port=18879)
    (tmp_path / "node").mkdir()
    launcher = gpu.runtime_launcher(layout, Path("/cache/bin/nvidia-container-runtime"))
    assert os.access(launcher, os.X_OK)
    assert f"XDG_CONFIG_HOME={tmp_path / 'node' / 'toolkit'} exec /cache/bin/nvidia-container-runtime" \
        in launcher.read_text()
    # The runtime reads $XDG_CONFIG_HOME/nvidia-container-runtime/config.toml: where the role writes it.
    assert gpu.toolkit_config(layout) == tmp_path / "node" / "toolkit" / "nvidia-container-runtime" / "config.toml"


def test_device_plugin_serves_the_kubelets_plugin_folder():
    argv = gpu.device_plugin_command(LAYOUT, BINS, Path("/var/lib/kubelet/device-plugins"))
    assert argv[0] == "/cache/bin/gpuci-device-plugin"
    assert "--device-plugin-dir=/var/lib/kubelet/device-plugins" in argv
    assert "--cdi-spec-dir=/tmp/state/node/cdi" in argv


@pytest.mark.parametrize("allocatable, expected", [({"nvidia.com/gpu": "1"}, True), ({"nvidia.com/gpu": "0"}, False),
                                                   ({}, False), (None, False)])
def test_gpus_count_only_when_allocatable(allocatable, expected):
    assert gpu.node_advertises_gpus({"status": {"allocatable": allocatable}}) is expected


def test_negative_control_differs_from_the_gpu_probe_only_by_the_request():
    with_gpu = gpu.probe_pod("p", "ns", "img", with_gpu=True)
    without = gpu.probe_pod("p", "ns", "img", with_gpu=False)
    assert with_gpu["spec"]["containers"][0]["resources"] == {"limits": {"nvidia.com/gpu": "1"}}
    without["spec"]["containers"][0]["resources"] = with_gpu["spec"]["containers"][0]["resources"]
    assert without == with_gpu
    assert with_gpu["spec"]["runtimeClassName"] == "nvidia"
    assert with_gpu["spec"]["nodeSelector"] == {"gpuci.runners/real-node": "true"}


@pytest.mark.parametrize("log, saw", [
    ("ls: cannot access '/dev/nvidia0': No such file or directory\nsh: 1: nvidia-smi: not found\nnvidia-smi-exit=127\n",
     False),
    ("/dev/nvidia0\n/dev/nvidiactl\nNVIDIA H100 80GB HBM3\nnvidia-smi-exit=0\n", True),
    # Device nodes without nvidia-smi (an image without the driver's tools) still saw the GPU.
    ("/dev/nvidia0\n/dev/nvidiactl\nsh: 1: nvidia-smi: not found\nnvidia-smi-exit=127\n", True),
    ("", True),  # no output proves nothing: count it as seen, so the control fails
])
def test_saw_gpu_counts_any_trace_of_the_driver(log, saw):
    assert gpu.saw_gpu(log) is saw


def test_on_without_a_gpu_stops_with_the_reason(monkeypatch):
    monkeypatch.setenv("GPUCI_TESTBED_GPU", "on")
    monkeypatch.setattr(gpu, "find_host_driver", lambda: "no NVIDIA GPU on this machine (/dev/nvidiactl missing)")
    with pytest.raises(SystemExit, match="GPUCI_TESTBED_GPU=on, but no NVIDIA GPU"):
        gpu.choose(LAYOUT)


def test_auto_on_a_gpu_host_labels_from_nvidia_smi(monkeypatch):
    monkeypatch.setenv("GPUCI_TESTBED_GPU", "auto")
    host = gpu.Driver(nvidia_smi=Path("/usr/local/nvidia/bin/nvidia-smi"), library_dirs=(Path("/usr/local/nvidia/lib64"),))
    monkeypatch.setattr(gpu, "find_host_driver", lambda: host)
    monkeypatch.setattr(gpu, "query_smi", lambda driver: H100_SMI)
    chosen = gpu.choose(LAYOUT)
    assert chosen == host and not chosen.fake
    assert chosen.labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"


def test_off_means_no_gpu_mode_even_on_a_gpu_host(monkeypatch):
    monkeypatch.setenv("GPUCI_TESTBED_GPU", "off")
    monkeypatch.setattr(gpu, "find_host_driver", lambda: pytest.fail("off must not look for a GPU"))
    assert gpu.choose(LAYOUT) is None
