# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The harness's private Docker engine: privileged containers start, and `down` leaves nothing behind."""
from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

import base_image
import dockerd
from lib import processes
from lib.node import CAP_SYS_RESOURCE_BIT, bounding_set_lacks_sys_resource

CAP_SYS_ADMIN_BIT = 21


def test_a_privileged_container_starts(docker_engine):
    """kind nodes are privileged containers; on VMs lacking CAP_SYS_RESOURCE only the wrapper makes them start."""
    proc = subprocess.run(["docker", "run", "--rm", "--privileged", "--network=host", base_image.ensure(),
                           "grep", "CapEff", "/proc/self/status"], capture_output=True, text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    effective = int(proc.stdout.split()[1], 16)
    assert effective >> CAP_SYS_ADMIN_BIT & 1, "CAP_SYS_ADMIN: the container is privileged"
    if bounding_set_lacks_sys_resource():
        assert not effective >> CAP_SYS_RESOURCE_BIT & 1, "the wrapper drops what this VM cannot grant"


def test_down_leaves_no_process_and_no_mount(tmp_path):
    engine = dockerd.Engine(state=Path(tempfile.mkdtemp(prefix="gpuci-docker-test-", dir="/tmp")),
                            data_root=tmp_path / "data-root")
    dockerd.up(engine)
    pid = json.loads((engine.pids / "dockerd.pid").read_text())["pid"]
    assert processes.is_running(engine, "dockerd")
    dockerd.down(engine)
    assert not processes.is_running(engine, "dockerd")
    assert not Path(f"/proc/{pid}").exists(), "stopped and reaped"
    mounts = Path("/proc/self/mounts").read_text()
    assert str(engine.state) not in mounts and str(engine.data_root) not in mounts
