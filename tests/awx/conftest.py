# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Shared helpers of the AWX, execution environment and Molecule tests (no cluster needed)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def run(*argv: str, cwd: Path = REPO, env: dict | None = None, timeout: int = 600) -> subprocess.CompletedProcess:
    """Run a tool of the venv (ansible-playbook, ansible-lint, ...) and capture its output."""
    tool = BIN / argv[0]
    command = [str(tool) if tool.exists() else argv[0], *argv[1:]]
    environment = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "PATH": f"{BIN}:{os.environ['PATH']}",
                   "ANSIBLE_NOCOLOR": "1", "NO_COLOR": "1", **(env or {})}
    return subprocess.run(command, cwd=cwd, env=environment, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="session", autouse=True)
def collection_link():
    """The checkout must be reachable as gpuci.runners (what `make venv` sets up)."""
    link = REPO / ".collections" / "ansible_collections" / "gpuci" / "runners"
    if not link.exists():
        pytest.fail("run `make venv` first: .collections/ansible_collections/gpuci/runners is missing")
