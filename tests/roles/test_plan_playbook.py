# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/plan.yml shows what site.yml would make, from the roles' own plans, touching no cluster.

The inventory's kubeconfig points at a file that does not exist: any task
that reached for a cluster would fail the run.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
TOKENS = ("glrt-testbed-l40s-placeholder", "glrt-testbed-a100-placeholder", "ghp-testbed-placeholder-not-a-token")


def test_plan_shows_the_local_inventory_without_a_cluster(tmp_path):
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               GPUCI_KUBECONFIG=str(tmp_path / "no-such-kubeconfig"))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(REPO / "inventories" / "local"),
           str(REPO / "playbooks" / "plan.yml"), "-e", f"gpuci_plan_dir={tmp_path}"]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    assert "release gitlab-runner/gitlab-runner-l40s: chart gitlab-runner 0.86.0 (gitlab_runner)" in output
    assert "secret arc-runners/testbed-dri-github-config (arc_runners; data not shown)" in output
    written = (tmp_path / "testbed.yml").read_text()
    plan = yaml.safe_load(written)
    assert [r["name"] for r in plan["releases"]][:2] == ["gpu-operator", "gitlab-runner-l40s"]
    l40s = next(r for r in plan["releases"] if r["name"] == "gitlab-runner-l40s")
    assert "nvidia.com/gpu" in l40s["values"]["runners"]["config"]
    assert {lane["name"] for lane in plan["canary_lanes"]} >= {"l40s-cuda-1gpu", "dri-dri"}
    leaked = [token for token in TOKENS if token in output or token in written]
    assert not leaked, f"credentials in the plan or its output: {leaked}"
