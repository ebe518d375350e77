# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Integration tests run the collection's playbooks against the local testbed.

The `testbed` fixture brings the real control plane up once per session (or
reuses one started by `make testbed-up`) and stops what it started at the end.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The testbed's own modules (lib.layout, lib.node) name the real node and its label.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "tools" / "testbed"))

from helpers import REPO_ROOT, Cluster, Playbooks  # noqa: E402

TESTBED = REPO_ROOT / "tools" / "testbed"


def _toolchain_missing() -> str | None:
    for tool in ("go", "bash"):
        if shutil.which(tool) is None:
            return f"the testbed build toolchain is missing: {tool!r} not on PATH"
    return None


@pytest.fixture(scope="session")
def testbed():
    missing = _toolchain_missing()
    if missing:
        pytest.skip(missing)
    subprocess.run(["bash", str(TESTBED / "build.sh")], check=True)
    subprocess.run(["bash", str(TESTBED / "build-images.sh")], check=True)
    status = subprocess.run([sys.executable, str(TESTBED / "testbed.py"), "status"], capture_output=True, check=False)
    started_here = status.returncode != 0
    if started_here:
        subprocess.run([sys.executable, str(TESTBED / "testbed.py"), "up", "--ttl", "5400"], check=True)
    cluster = Cluster(REPO_ROOT / ".testbed" / "kubeconfig")
    try:
        yield cluster
    finally:
        if started_here and not os.environ.get("GPUCI_KEEP_TESTBED"):
            subprocess.run([sys.executable, str(TESTBED / "testbed.py"), "down"], check=False)


@pytest.fixture(scope="session")
def playbooks(testbed):
    return Playbooks(testbed)
