# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/alert_rules.yml writes each cluster's alert rules file from the inventory; with
gpuci_alert_rules_in_cluster off it touches no cluster.

Offline (tests/roles/offline_playbook.py): any task that reached for a
cluster would fail the run. Placing the PrometheusRule in a cluster is
tests/integration/test_alert_rules_in_cluster.py's. promtool's checks of the same
rules are tests/rules' (make rules-tests).
"""
from __future__ import annotations

from pathlib import Path

import yaml

from offline_playbook import REPO, TOKENS, run_offline


def run_playbook(out_dir, *extra, **options):
    return run_offline("alert_rules.yml", "gpuci_alert_rules_dir", out_dir, "-e", "gpuci_alert_rules_in_cluster=off",
                       *extra, **options)


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


def test_a_relative_rules_dir_is_where_ansible_playbook_runs_not_the_playbooks_dir(tmp_path):
    """Run from a directory of the user's: the rules land there, as the playbook's header says."""
    returncode, output = run_playbook(Path("rules"), cwd=tmp_path)
    assert returncode == 0, output[-4000:]
    assert (tmp_path / "rules" / "testbed.rules.yml").is_file()
    assert not (REPO / "playbooks" / "rules").exists(), "written relative to the playbook's directory"
