# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU mode's DRA kubelet plugin STAND-IN (tools/testbed/draplugin), as lib/gpu.py starts it: its argv, the
GPU facts it publishes, containerd's CDI folder, the slice GPU mode waits for, and its build."""
import sys
import tomllib
from pathlib import Path

import tomli_w

TESTBED = Path(__file__).resolve().parents[2] / "tools" / "testbed"
if str(TESTBED) not in sys.path:
    sys.path.insert(0, str(TESTBED))

from lib import gpu  # noqa: E402  (needs the path above)
from lib.layout import REPO_ROOT, Layout  # noqa: E402

BINARY = Path("/cache/bin/gpuci-dra-plugin")
# nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader,nounits on an H200 host.
H200_SMI = "NVIDIA H200, 143771, 580.159.04\n"


def _layout(state: Path) -> Layout:
    return Layout(state=state, charts_dir=Path("/charts"), apiserver_port=16443, etcd_port=12379, chart_repo_port=18879)


def _flags(argv):
    return dict(arg[2:].split("=", 1) for arg in argv[1:])


def test_the_plugin_registers_in_the_real_nodes_kubelet_root_with_the_kubelets_identity(tmp_path):
    layout = _layout(tmp_path)
    driver = gpu.Driver(nvidia_smi=Path("/usr/bin/nvidia-smi"), facts=gpu.gpu_facts(H200_SMI))
    argv = gpu.dra_plugin_command(layout, driver, BINARY)
    flags = _flags(argv)
    assert argv[0] == str(BINARY)
    root = tmp_path / "node" / "kubelet" / "root"
    assert flags["registrar-dir"] == str(root / "plugins_registry")  # the kubelet's <root-dir>/plugins_registry
    assert flags["plugin-dir"] == str(root / "plugins" / "gpu.nvidia.com")
    assert flags["kubeconfig"] == str(tmp_path / "node" / "kubelet" / "kubeconfig")
    assert flags["node-name"] == "real-0" and flags["kind"] == "nvidia.com/gpu"
    assert flags["cdi-spec-dir"] == str(gpu.cdi_dir(layout))  # the spec the device plugin stand-in reads
    assert flags["product-name"] == "NVIDIA H200"  # as nvidia-smi prints it; the class selector dashes it
    assert flags["memory-mib"] == "143771" and flags["driver-version"] == "580.159.04"


def test_a_fake_gpu_is_published_as_the_fake_product_without_memory(tmp_path):
    driver = gpu.Driver(nvidia_smi=tmp_path / "nvidia-smi", fake=True, facts=gpu.fake_facts("580.159.04"))
    flags = _flags(gpu.dra_plugin_command(_layout(tmp_path), driver, BINARY))
    assert flags["product-name"] == gpu.FAKE_PRODUCT == "gpuci-FAKE-stand-in"
    assert flags["brand"] == flags["architecture"] == "unknown"
    assert "memory-mib" not in flags and flags["driver-version"] == "580.159.04"


def test_facts_come_from_the_first_row_and_tolerate_a_missing_column():
    assert gpu.gpu_facts(H200_SMI * 8) == {"product_name": "NVIDIA H200", "memory_mib": "143771",
                                           "driver_version": "580.159.04"}
    assert gpu.gpu_facts("NVIDIA H100 80GB HBM3, 81559\n") == {"product_name": "NVIDIA H100 80GB HBM3",
                                                               "memory_mib": "81559"}
    assert gpu.labels_from_smi(H200_SMI)["nvidia.com/gpu.product"] == "NVIDIA-H200"  # the extra column changes no label


def test_brand_and_architecture_come_from_nvidia_smi_q(tmp_path):
    smi = tmp_path / "nvidia-smi"
    smi.write_text("#!/bin/sh\ncat <<'EOF'\n==============NVSMI LOG==============\nAttached GPUs : 1\n"
                   "GPU 00000000:04:00.0\n    Product Name : NVIDIA H200\n    Product Brand : NVIDIA\n"
                   "    Product Architecture : Hopper\nEOF\n")
    smi.chmod(0o755)
    assert gpu.smi_details(gpu.Driver(nvidia_smi=smi)) == {"brand": "NVIDIA", "architecture": "Hopper"}
    assert gpu.smi_details(gpu.Driver(nvidia_smi=tmp_path / "missing")) == {}


def test_containerd_looks_for_cdi_specs_in_the_state_folder_and_keeps_the_rest(tmp_path):
    layout = _layout(tmp_path)
    config = tmp_path / "node" / "containerd" / "config.toml"
    config.parent.mkdir(parents=True)
    original = {"version": 3, "plugins": {"io.containerd.cri.v1.runtime": {"containerd": {"default_runtime_name": "runc"}}}}
    config.write_text(tomli_w.dumps(original))
    gpu.add_cdi_spec_dir(layout)
    gpu.add_cdi_spec_dir(layout)
    runtime = tomllib.loads(config.read_text())["plugins"]["io.containerd.cri.v1.runtime"]
    assert runtime["cdi_spec_dirs"] == [str(tmp_path / "node" / "cdi")]
    # containerd 2.x has CDI on by default; setting it would clash with the toolkit role's cdi_enabled false.
    assert "enable_cdi" not in runtime
    assert runtime["containerd"] == {"default_runtime_name": "runc"}


def test_gpu_mode_counts_only_the_real_nodes_slice_of_nvidias_driver():
    slices = [{"spec": {"driver": "gpu.nvidia.com", "nodeName": "real-0", "devices": [{"name": "gpu-0"}]}},
              {"spec": {"driver": "gpu.nvidia.com", "nodeName": "gpu-l40s-0", "devices": [{"name": "gpu-0"}] * 4}},
              {"spec": {"driver": "example.com", "nodeName": "real-0", "devices": [{"name": "x"}]}},
              {"spec": {"driver": "gpu.nvidia.com", "nodeName": "real-0"}}]  # an empty pool's slice
    assert gpu.dra_slice_devices(slices) == 1
    assert gpu.dra_slice_devices([]) == 0


def test_the_sockets_fit_a_unix_socket_path_in_this_checkout():
    """sun_path holds 107 bytes; the kubelet's registration folder lies in the state folder (instance 99 is long)."""
    root = gpu.kubelet_root(_layout(REPO_ROOT / ".testbed-99"))
    for socket in (root / "plugins_registry" / "gpu.nvidia.com-reg.sock", root / "plugins" / "gpu.nvidia.com" / "dra.sock"):
        assert len(str(socket)) <= 107, socket


def test_it_is_built_by_default():
    """Its cache folder follows its sources: tests/unit/testbed/test_own_go_tools.py."""
    build = (TESTBED / "build.sh").read_text()
    assert "dra-plugin) build_own draplugin gpuci-dra-plugin ;;" in build
    default = build.split("TESTBED_COMPONENTS=(", 1)[1].split(")", 1)[0].split()
    assert "dra-plugin" in default


def test_it_says_it_is_a_stand_in():
    source = (TESTBED / "draplugin" / "main.go").read_text()
    assert source.count("STAND-IN (test harness only)") >= 3  # header, --help, every log line's prefix
    assert 'const driverName = "gpu.nvidia.com"' in source
