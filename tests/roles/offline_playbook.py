# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run one of the playbooks that touch no cluster (plan.yml, alert_rules.yml) on inventories/local.

The inventory's kubeconfig points at a file that does not exist: any task
that reached for a cluster would fail the run.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# inventories/local's placeholder tokens: none may reach an output.
TOKENS = ("glrt-testbed-l40s-placeholder", "glrt-testbed-a100-placeholder", "ghp-testbed-placeholder-not-a-token")


def run_offline(playbook, out_var, out_dir, *extra, cwd=REPO):
    """ansible-playbook playbooks/<playbook> writing to out_dir (passed as out_var), run in cwd; returns (rc, output)."""
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               GPUCI_KUBECONFIG=str(out_dir / "no-such-kubeconfig"))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(REPO / "inventories" / "local"),
           str(REPO / "playbooks" / playbook), "-e", f"{out_var}={out_dir}", *extra]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, check=False, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr
