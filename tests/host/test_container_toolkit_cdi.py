"""CDI spec generation by roles/container_toolkit on a GKE-style node, in the Debian root.

The root (conftest.py) gets a FAKE driver laid out as on GKE and as measured
on an H100 host (driver 580.159.04): /usr/local/nvidia/bin/nvidia-smi (a
script), /usr/local/nvidia/lib64/libcuda.so.580.159.04 (empty) and
libnvidia-ml.so.580.159.04 (the NVML stand-in of tests/standins, one H100),
and the device nodes in the root's /dev (mknod). nvidia-ctk is the real
v1.17.8 from the stand-in packages, run by the role inside the root, so
driver_root=/usr/local/nvidia meets the same "invalid device, empty device
edits" as on the real node, and driver_root=/ with the library search path
writes the spec.

Runs after test_container_toolkit.py (file order), which ends with the
toolkit removed, or alone: either way the first converge here installs it.
"""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "standins"))
import fake_driver  # noqa: E402  pylint: disable=wrong-import-position

SPEC = "/etc/cdi/nvidia.yaml"
DRIVER = "/usr/local/nvidia"
VERSION = fake_driver.DRIVER_VERSION
CDI_TASK = "Generate the CDI spec with nvidia-ctk"
GKE_FIX = {
    "container_toolkit_cdi_generate": True,
    "container_toolkit_cdi_driver_root": "/",
    "container_toolkit_cdi_library_search_paths": [DRIVER + "/lib64"],
    "container_toolkit_cdi_executable_search_paths": [DRIVER + "/bin"],
}


def assert_ok(run):
    assert run.rc == 0, run.stderr


@pytest.fixture(scope="module")
def gke_node(debian_root):
    fake_driver.lay_out(debian_root.path, driver_dir=DRIVER.lstrip("/"))
    return debian_root


def test_the_gke_driver_root_fails_and_names_the_variables_that_fix_it(gke_node):
    run = gke_node.playbook(container_toolkit_cdi_generate=True, container_toolkit_cdi_driver_root=DRIVER)
    assert run.rc != 0
    # The module's failure, then the role's rescue that says it in inventory variables.
    message = next(m for m in run.messages() if "In the inventory" in m)
    assert "invalid device, empty device edits" in message and "under /usr/local/nvidia/dev" in message
    assert 'container_toolkit_cdi_driver_root: "/"' in message
    assert 'container_toolkit_cdi_library_search_paths: ["/usr/local/nvidia/lib64"]' in message
    assert gke_node.read(SPEC) is None


def test_check_mode_reports_the_spec_and_writes_nothing(gke_node):
    before = gke_node.snapshot()
    run = gke_node.playbook(check=True, **GKE_FIX)
    assert_ok(run)
    assert [name.split(" : ")[-1] for name in run.changed_tasks()] == [CDI_TASK]
    diff = next(r["diff"] for name, r in run.results() if name.endswith(CDI_TASK))
    assert diff["before"] == "" and "libcuda.so.%s" % VERSION in diff["after"]
    assert gke_node.snapshot() == before


def test_converge_writes_the_spec_nvidia_ctk_writes(gke_node):
    assert_ok(gke_node.playbook(**GKE_FIX))
    spec = gke_node.read(SPEC)
    for path in ("lib64/libcuda.so.%s" % VERSION, "lib64/libnvidia-ml.so.%s" % VERSION, "bin/nvidia-smi"):
        assert "hostPath: %s/%s\n" % (DRIVER, path) in spec, path
    # Device nodes at the same path on host and in the container: nvidia-ctk writes no hostPath.
    assert "- path: /dev/nvidia0\n" in spec and "- path: /dev/nvidiactl\n" in spec
    assert 'name: "0"' in spec and "name: %s" % fake_driver.STANDIN_UUID in spec and "name: all" in spec
    gke_node.chroot("rm", "-rf", "/tmp/expect")
    gke_node.chroot("mkdir", "/tmp/expect")
    gke_node.chroot("env", "PATH=%s/bin:/usr/bin:/bin" % DRIVER, "nvidia-ctk", "--quiet", "cdi", "generate",
                    "--output=/tmp/expect/nvidia.yaml", "--driver-root=/",
                    "--library-search-path=%s/lib64" % DRIVER)
    assert spec == gke_node.read("/tmp/expect/nvidia.yaml")


def test_second_run_changes_nothing(gke_node):
    run = gke_node.playbook(**GKE_FIX)
    assert_ok(run)
    assert run.changed == 0, run.changed_tasks()


@pytest.mark.parametrize("overrides, named", [
    ({"container_toolkit_cdi_driver_root": "usr/local/nvidia"}, "container_toolkit_cdi_driver_root: usr/local/nvidia"),
    ({"container_toolkit_cdi_library_search_paths": ["lib64"]}, "container_toolkit_cdi_library_search_paths: lib64"),
    ({"container_toolkit_cdi_spec_path": "/etc/cdi/nvidia.yml"}, "container_toolkit_cdi_spec_path"),
])
def test_preflight_refuses_bad_cdi_paths_before_any_change(gke_node, overrides, named):
    before = gke_node.snapshot()
    run = gke_node.playbook(**dict(GKE_FIX, **overrides))
    assert run.rc != 0
    assert any(named in m for m in run.messages()), run.messages()
    assert gke_node.snapshot() == before


def test_absent_removes_the_spec(gke_node):
    assert_ok(gke_node.playbook(container_toolkit_state="absent", **GKE_FIX))
    assert gke_node.read(SPEC) is None
    assert gke_node.versions() == {}
    run = gke_node.playbook(container_toolkit_state="absent", **GKE_FIX)
    assert_ok(run)
    assert run.changed == 0, run.changed_tasks()
