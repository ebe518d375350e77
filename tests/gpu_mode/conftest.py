# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""GPU mode of the testbed's real node: its own testbed, started in GPU mode.

On a machine with an NVIDIA GPU (/dev/nvidiactl) the host driver is used and
the tests marked `gpu` run; elsewhere (CI) GPUCI_TESTBED_GPU=fake lays out the
FAKE driver of tests/standins and the `gpu` tests skip, saying why.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
TESTBED = REPO_ROOT / "tools" / "testbed"
sys.path.insert(0, str(REPO_ROOT / "tests" / "integration"))
sys.path.insert(0, str(TESTBED))

from helpers import Cluster, Playbooks  # noqa: E402
from lib import gpu  # noqa: E402
from lib.layout import Layout  # noqa: E402

_FOUND = gpu.find_host_driver()
HAS_GPU = not isinstance(_FOUND, str)
NO_GPU_REASON = "" if HAS_GPU else _FOUND
# GPUCI_TESTBED_INSTANCE picks the testbed (make test runs this tier on one of its own, beside the others):
# the playbooks and tools the tests start find its kubeconfig, chart repository and GitLab stand-in here.
os.environ.update(Layout.from_environment().client_environment())


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs an NVIDIA GPU on this machine (skipped elsewhere, saying why)")


def pytest_collection_modifyitems(items):
    for item in items:
        if "gpu" in item.keywords and not HAS_GPU:
            item.add_marker(pytest.mark.skip(reason=f"needs an NVIDIA GPU: {NO_GPU_REASON}"))


def _testbed(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(TESTBED / "testbed.py"), *args], env=env, check=False)


@pytest.fixture(scope="session")
def gpu_mode() -> str:
    """'real' on a GPU host, 'fake' elsewhere, or where GPUCI_TESTBED_GPU=fake asks for it."""
    return "real" if HAS_GPU and os.environ.get("GPUCI_TESTBED_GPU") != "fake" else "fake"


@pytest.fixture(scope="session")
def layout() -> Layout:
    return Layout.from_environment()


@pytest.fixture(scope="session")
def testbed(gpu_mode, layout):
    env = {**os.environ, "GPUCI_TESTBED_GPU": "on" if gpu_mode == "real" else "fake"}
    if _testbed("status", env=env).returncode == 0:
        pytest.fail("a testbed already runs here; the GPU mode tests start their own (make testbed-down first)")
    if os.geteuid() != 0:
        pytest.skip("the real node needs root")
    # From an unpacked GPU bundle (GPUCI_PYTHON set, as for make gpu-proof) nothing is built: the bundle is the cache.
    if not os.environ.get("GPUCI_PYTHON"):
        subprocess.run(["bash", str(TESTBED / "build.sh")], check=True)
        subprocess.run(["bash", str(TESTBED / "build-images.sh")], check=True)
    up = _testbed("up", "--ttl", "1800", env=env)
    try:
        assert up.returncode == 0, "testbed up in GPU mode failed; logs under " + str(layout.logs)
        yield Cluster(layout.kubeconfig)
    finally:
        if not os.environ.get("GPUCI_KEEP_TESTBED"):
            _testbed("down", env=env)


@pytest.fixture(scope="session")
def playbooks(testbed) -> Playbooks:
    return Playbooks(testbed)
