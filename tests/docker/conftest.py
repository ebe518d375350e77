# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Docker tier: what users run in containers (the AWX execution environment, kind), run for real.

A private Docker engine (tools/docker/dockerd.py) is started for the session
and stopped at its end unless one was running already; the testbed is the
integration tier's (tests/integration/helpers.running_testbed). Run through
tests/docker/run.sh, which installs docker.io and mmdebstrap when missing.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
for folder in ("tests/integration", "tools/docker", "tools/awx", "tools/kind"):
    sys.path.insert(0, str(REPO / folder))

import build_ee  # noqa: E402
import dockerd  # noqa: E402
import node_image  # noqa: E402
from helpers import running_testbed  # noqa: E402
from lib import processes  # noqa: E402


@pytest.fixture(scope="session")
def docker_engine():
    if not shutil.which("dockerd") or not shutil.which("mmdebstrap"):
        pytest.fail("dockerd and mmdebstrap are needed; tests/docker/run.sh installs them (make docker-tests)")
    engine = dockerd.Engine.from_environment()
    started_here = not processes.is_running(engine, "dockerd")
    dockerd.up(engine)
    os.environ["DOCKER_HOST"] = engine.docker_host
    try:
        yield engine
    finally:
        if started_here:
            dockerd.down(engine)


@pytest.fixture(scope="session")
def ee_image(docker_engine) -> str:
    return build_ee.ensure()


@pytest.fixture(scope="session")
def kind_node_image(docker_engine) -> str:
    subprocess.run(["bash", str(REPO / "tools/testbed/build.sh"), "kind", "etcd-kind", "coredns-kind"],
                   check=True)
    return node_image.ensure()


@pytest.fixture(scope="session")
def testbed():
    with running_testbed() as cluster:
        yield cluster
