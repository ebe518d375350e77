# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The real nvidia-ctk v1.17.8 `cdi generate` against a fake GKE-style driver tree, no GPU needed.

Needs the binary that `tools/testbed/build.sh nvidia-ctk` builds (or
GPUCI_NVIDIA_CTK), mknod (root or CAP_MKNOD) for the fake device nodes, and a
C compiler for the NVML stand-in (tests/standins): each test skips, saying
which, when its need is missing. What is fake: the driver files
(tests/standins/fake_driver.py) and NVML (tests/standins/libnvidia-ml-standin.c,
one H100, driver 580.159.04). What is real: nvidia-ctk and every lookup, hook
and validation it does. The device nodes live in a temporary dev root, so
"the device nodes in /dev" of a GKE node is --dev-root=<tmp> here.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[4]
MODULE = "ansible_collections.gpuci.runners.plugins.modules.nvidia_ctk_cdi"
EMPTY_DEVICE_EDITS = "invalid device, empty device edits"


def _load_fake_driver():
    sys.path.insert(0, str(REPO / "tests" / "standins"))
    try:
        import fake_driver  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.pop(0)
    return fake_driver


fake_driver = _load_fake_driver()
VERSION = fake_driver.DRIVER_VERSION


def _nvidia_ctk():
    if os.environ.get("GPUCI_NVIDIA_CTK"):
        return Path(os.environ["GPUCI_NVIDIA_CTK"])
    sys.path.insert(0, str(REPO / "tools" / "testbed"))
    try:
        from lib.layout import component_bin_dirs  # pylint: disable=import-outside-toplevel
    finally:
        sys.path.pop(0)
    (bin_dir,) = component_bin_dirs("nvidia-ctk")
    return bin_dir / "nvidia-ctk"


CTK = _nvidia_ctk()
pytestmark = pytest.mark.skipif(
    not os.access(CTK, os.X_OK),
    reason="the real nvidia-ctk is not at %s; `bash tools/testbed/build.sh nvidia-ctk` builds it "
           "(or set GPUCI_NVIDIA_CTK)" % CTK)


def _tree(tmp_path_factory, name, nvml):
    root = tmp_path_factory.mktemp(name)
    try:
        driver = fake_driver.lay_out(root, nvml=nvml)
    except fake_driver.Unavailable as e:
        pytest.skip("no fake driver tree on this machine: %s" % e)
    return root, driver


@pytest.fixture(scope="module")
def gke(tmp_path_factory):
    """(root, driver folder): fake /usr/local/nvidia with the NVML stand-in, device nodes in root/dev."""
    return _tree(tmp_path_factory, "gke-nvml", nvml=True)


@pytest.fixture(scope="module")
def gke_without_nvml(tmp_path_factory):
    """The same tree with an empty libnvidia-ml: only --mode=management can work."""
    return _tree(tmp_path_factory, "gke-no-nvml", nvml=False)


def generate(*args, output):
    return subprocess.run([str(CTK), "cdi", "generate", "--output=%s" % output, *args],
                          capture_output=True, text=True, check=False)


def run_module(tmp_path, check=False, **params):
    args = tmp_path / "args.json"
    params.update(_ansible_check_mode=check, _ansible_diff=True, _ansible_remote_tmp=str(tmp_path / "remote-tmp"),
                  nvidia_ctk=str(CTK))
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": params}))
    proc = subprocess.run([sys.executable, "-m", MODULE, str(args)], capture_output=True, text=True, check=False,
                          env=dict(os.environ, PYTHONPATH=str(REPO / ".collections")))
    return json.loads(proc.stdout)


def gke_fix(root, driver):
    """The fix measured on the H100 host, with the fake tree's dev root."""
    return dict(driver_root="/", dev_root=str(root), library_search_paths=[str(driver / "lib64")],
                executable_search_paths=[str(driver / "bin")])


def test_the_gke_driver_root_fails_with_empty_device_edits(gke, tmp_path):
    _root, driver = gke
    proc = generate("--driver-root=%s" % driver, output=tmp_path / "nvidia.yaml")
    assert proc.returncode == 1
    assert EMPTY_DEVICE_EDITS in proc.stderr
    assert "Auto-detected mode as 'nvml'" in proc.stderr  # the stand-in NVML was loaded
    assert not (tmp_path / "nvidia.yaml").exists()


def test_the_module_explains_the_gke_failure_and_writes_nothing(gke, tmp_path):
    _root, driver = gke
    spec = tmp_path / "cdi" / "nvidia.yaml"
    result = run_module(tmp_path, path=str(spec), driver_root=str(driver))
    assert result["failed"] is True and EMPTY_DEVICE_EDITS in result["msg"]
    assert result["suggested"] == {"driver_root": "/", "library_search_paths": [str(driver / "lib64")],
                                   "executable_search_paths": [str(driver / "bin")]}
    assert not spec.exists()


def test_driver_root_slash_and_library_search_path_name_the_fake_driver(gke, tmp_path):
    root, driver = gke
    spec = tmp_path / "cdi" / "nvidia.yaml"
    result = run_module(tmp_path, path=str(spec), **gke_fix(root, driver))
    assert result["changed"] is True, result.get("msg")
    assert result["devices"] == ["0", fake_driver.STANDIN_UUID, "all"]
    text = spec.read_text()
    for name in ("lib64/libcuda.so.%s" % VERSION, "lib64/libnvidia-ml.so.%s" % VERSION, "bin/nvidia-smi"):
        assert "hostPath: %s" % (driver / name) in text, name
    for node in ("nvidia0", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"):
        assert "hostPath: %s/dev/%s\n" % (root, node) in text and "path: /dev/%s\n" % node in text
    assert "--host-driver-version=%s" % VERSION in text  # driver version read through (stand-in) NVML

    again = run_module(tmp_path, path=str(spec), **gke_fix(root, driver))
    assert again["changed"] is False
    assert spec.read_text() == text


def test_check_mode_with_a_changed_option_writes_nothing(gke, tmp_path):
    root, driver = gke
    spec = tmp_path / "nvidia.yaml"
    run_module(tmp_path, path=str(spec), **gke_fix(root, driver))
    before = spec.read_bytes()
    result = run_module(tmp_path, check=True, path=str(spec), device_name_strategy=["uuid"], **gke_fix(root, driver))
    assert result["changed"] is True and result["devices"] == [fake_driver.STANDIN_UUID, "all"]
    assert 'name: "0"' in result["diff"]["before"] and 'name: "0"' not in result["diff"]["after"]
    assert spec.read_bytes() == before


def test_output_is_byte_for_byte_deterministic(gke, tmp_path):
    """Why the module compares without normalising: nothing in the spec varies between runs."""
    root, driver = gke
    args = ("--driver-root=/", "--dev-root=%s" % root, "--library-search-path=%s" % (driver / "lib64"))
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    assert generate(*args, output=first).returncode == 0
    assert generate(*args, output=second).returncode == 0
    assert first.read_bytes() == second.read_bytes()


def test_a_json_spec(gke, tmp_path):
    root, driver = gke
    spec = tmp_path / "nvidia.json"
    result = run_module(tmp_path, path=str(spec), **gke_fix(root, driver))
    assert result["changed"] is True
    assert json.loads(spec.read_text())["kind"] == "nvidia.com/gpu"


def test_dev_root_slash_with_the_gke_driver_root_is_accepted_too(gke, tmp_path):
    """nvidia-ctk also takes driver_root=/usr/local/nvidia with dev_root=/: libraries are then
    mounted at /lib64 in the container. Shown here with the stand-in NVML only; the H100 host
    measured the driver_root=/ fix, which the docs recommend."""
    root, driver = gke
    result = run_module(tmp_path, path=str(tmp_path / "nvidia.yaml"), driver_root=str(driver), dev_root=str(root))
    assert result["changed"] is True, result.get("msg")
    assert "containerPath: /lib64/libcuda.so.%s" % VERSION in (tmp_path / "nvidia.yaml").read_text()


def test_without_nvml_auto_mode_fails_and_management_mode_works(gke_without_nvml, tmp_path):
    root, driver = gke_without_nvml
    failed = run_module(tmp_path, path=str(tmp_path / "nvml.yaml"), **gke_fix(root, driver))
    assert failed["failed"] is True and "failed to initialize NVML" in failed["msg"]
    assert str(driver / "lib64") in failed["hint"]

    spec = tmp_path / "management.yaml"
    result = run_module(tmp_path, path=str(spec), mode="management", **gke_fix(root, driver))
    assert result["changed"] is True, result.get("msg")
    assert result["devices"] == ["all"]
    text = spec.read_text()
    assert "hostPath: %s/lib64/libcuda.so.%s" % (driver, VERSION) in text  # version from the file name
    assert "hostPath: %s/dev/nvidia0" % root in text


def test_management_mode_with_the_gke_driver_root_finds_no_device_nodes(gke_without_nvml, tmp_path):
    _root, driver = gke_without_nvml
    result = run_module(tmp_path, path=str(tmp_path / "nvidia.yaml"), mode="management", driver_root=str(driver))
    assert result["failed"] is True and "no NVIDIA device nodes found" in result["msg"]
    assert result["suggested"]["driver_root"] == "/"


@pytest.mark.skipif(shutil.which("nvidia-smi") is not None, reason="this machine has a real nvidia-smi on PATH")
def test_without_executable_search_paths_nvidia_smi_is_left_out(gke, tmp_path):
    root, driver = gke
    params = gke_fix(root, driver)
    params["executable_search_paths"] = []
    run_module(tmp_path, path=str(tmp_path / "nvidia.yaml"), **params)
    assert "nvidia-smi" not in (tmp_path / "nvidia.yaml").read_text()
