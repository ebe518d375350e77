# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/alert_rules.yml writes each cluster's alert rules file from the inventory, touching no cluster.

The inventory's kubeconfig points at a file that does not exist: any task
that reached for a cluster would fail the run. promtool's checks of the same
rules are tests/rules' (make rules-tests).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
TOKENS = ("glrt-testbed-l40s-placeholder", "glrt-testbed-a100-placeholder", "ghp-testbed-placeholder-not-a-token")


def run_playbook(rules_dir, *extra):
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               GPUCI_KUBECONFIG=str(rules_dir / "no-such-kubeconfig"))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(REPO / "inventories" / "local"),
           str(REPO / "playbooks" / "alert_rules.yml"), "-e", f"gpuci_alert_rules_dir={rules_dir}", *extra]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def test_the_local_inventory_gets_its_rules_file(tmp_path):
    rules_dir = tmp_path / "rules"
    returncode, output = run_playbook(rules_dir, "-e", "gpuci_alert_gpu_idle_for=45m")
    assert returncode == 0, output[-4000:]
    written = (rules_dir / "testbed.rules.yml").read_text()
    rules = {rule["alert"]: rule for group in yaml.safe_load(written)["groups"] for rule in group["rules"]}
    assert 'pool=~"a100-mig|cpu|l40s"' in rules["GpuciGitlabPoolSaturated"]["expr"]
    assert rules["GpuciGpuIdleInCiJob"]["for"] == "45m"
    # The GPU pools' job namespace and the scale sets' (their role's, as the inventory sets it).
    assert 'namespace=~"arc-runners|gitlab-runner-jobs"' in rules["GpuciGpuIdleInCiJob"]["expr"]
    leaked = [token for token in TOKENS if token in output or token in written]
    assert not leaked, f"credentials in the rules or the output: {leaked}"


def test_a_bad_threshold_stops_the_run_naming_its_variable(tmp_path):
    returncode, output = run_playbook(tmp_path / "rules", "-e", "gpuci_alert_queue_seconds=ten")
    assert returncode != 0
    assert "gpuci_alert_queue_seconds: expected a positive number, got 'ten'" in output
    assert not (tmp_path / "rules" / "testbed.rules.yml").exists()
