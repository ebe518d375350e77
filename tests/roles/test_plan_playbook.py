# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/plan.yml checks what site.yml checks and, without a cluster, shows what site.yml would make.

Offline (tests/roles/offline_playbook.py): the inventory's kubeconfig does
not exist, so the plan's one read fails and the plan says it did not look;
what it prints when it reads a cluster is tested over recorded reads
(tests/unit/plugins/module_utils/fleet/test_fleet_changes.py) and against
the testbed (tests/integration/test_plan_against_cluster.py).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from offline_playbook import REPO, TOKENS, run_offline


def run_plan(out_dir, *extra):
    return run_offline("plan.yml", "gpuci_plan_dir", out_dir, *extra)


def test_plan_shows_the_local_inventory_without_a_cluster(tmp_path):
    plan_dir = tmp_path / "plans"  # not there yet, as `-e gpuci_plan_dir=plans` on a first run: the playbook makes it
    returncode, output = run_plan(plan_dir)
    assert returncode == 0, output[-4000:]
    # The cluster out of reach is no error: the plan says it did not look, why, and what site would make.
    assert "Did not look at the cluster (the cluster could not be read: Cannot reach the Kubernetes API server " \
           f"with kubeconfig {plan_dir / 'no-such-kubeconfig'}" in " ".join(output.split())
    assert "release gitlab-runner/gitlab-runner-l40s: chart gitlab-runner 0.86.0 (gitlab_runner)" in output
    assert "secret arc-runners/testbed-dri-github-config (arc_runners; data not shown)" in output
    written = (plan_dir / "testbed.yml").read_text()
    plan = yaml.safe_load(written)
    assert plan["cluster"]["looked"] is False and plan["changes"] is None
    assert [r["name"] for r in plan["releases"]][:2] == ["gpu-operator", "gitlab-runner-l40s"]
    l40s = next(r for r in plan["releases"] if r["name"] == "gitlab-runner-l40s")
    assert "nvidia.com/gpu" in l40s["values"]["runners"]["config"]
    assert {lane["name"] for lane in plan["canary_lanes"]} >= {"l40s-cuda-1gpu", "dri-dri"}
    leaked = [token for token in TOKENS if token in output or token in written]
    assert not leaked, f"credentials in the plan or its output: {leaked}"


def _old_name_inventories():
    """The local inventory with gpu_access written under its old names: a pool's lane, a scale set's lane, a class's lanes."""
    group_vars = REPO / "inventories" / "local" / "group_vars" / "all"
    pools = yaml.safe_load((group_vars / "gitlab_runner.yml").read_text())["gitlab_runner_pools"]
    scale_sets = yaml.safe_load((group_vars / "arc_runners.yml").read_text())["arc_runners_scale_sets"]
    pools[0]["lane"] = pools[0].pop("gpu_access", "cuda")
    dri = next(entry for entry in scale_sets if entry.get("gpu_access"))
    dri["lane"] = dri.pop("gpu_access")
    return [
        ({"gitlab_runner_pools": pools}, f"gitlab_runner_pools[name={pools[0]['name']}].lane",
         f"gitlab_runner_pools[name={pools[0]['name']}].gpu_access"),
        ({"arc_runners_scale_sets": scale_sets}, f"arc_runners_scale_sets[name={dri['name']}].lane",
         f"arc_runners_scale_sets[name={dri['name']}].gpu_access"),
        ({"gpu_classes": {"l40s": {"lanes": ["cuda"]}}}, "gpu_classes.l40s.lanes", "gpu_classes.l40s.gpu_access"),
    ]


def test_plan_refuses_gpu_access_under_its_old_names(tmp_path):
    """lane and lanes are no longer read: the run stops, naming where the inventory wrote it and what to write."""
    for index, (variables, old, new) in enumerate(_old_name_inventories()):
        old_keys = tmp_path / f"old-keys-{index}.yml"
        old_keys.write_text(yaml.safe_dump(variables))
        returncode, output = run_plan(tmp_path / str(index), "-e", f"@{old_keys}")
        assert returncode != 0, output[-4000:]
        assert f"{old}: was renamed gpu_access; set {new} instead" in " ".join(output.split()), output[-4000:]


def test_the_offline_switch_plans_without_reading_the_cluster(tmp_path):
    returncode, output = run_plan(tmp_path, "-e", "gpuci_plan_offline=true")
    assert returncode == 0, output[-4000:]
    assert "Did not look at the cluster (gpuci_plan_offline is set): what site would make, not what it would change" \
        in " ".join(output.split())
    assert re.search(r"TASK \[Read the cluster, changing nothing[^\n]*\n\s*skipping: \[testbed\]", output), output[-4000:]
    assert "Cannot reach" not in output


def test_a_relative_plan_dir_is_where_ansible_playbook_runs_not_in_the_collection(tmp_path):
    returncode, output = run_offline("plan.yml", "gpuci_plan_dir", Path("plans"), cwd=tmp_path)
    assert returncode == 0, output[-4000:]
    assert (tmp_path / "plans" / "testbed.yml").is_file()
    assert not (REPO / "playbooks" / "plans").exists()


def test_chart_repository_credentials_in_a_url_are_masked_in_the_output_and_the_written_plan(tmp_path):
    url = "https://deploy:REPO-PASSWORD@charts.example.com/gitlab"
    returncode, output = run_plan(tmp_path, "-e", f"gitlab_runner_chart_repo_url={url}")
    assert returncode == 0, output[-4000:]
    written = (tmp_path / "testbed.yml").read_text()
    assert "REPO-PASSWORD" not in output and "REPO-PASSWORD" not in written
    repositories = {r["repository"] for r in yaml.safe_load(written)["releases"] if r["role"] == "gitlab_runner"}
    assert repositories == {"https://***@charts.example.com/gitlab"}


def _site_check(*extra):
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               GPUCI_KUBECONFIG=str(REPO / "no-such-kubeconfig"))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(REPO / "inventories" / "local"),
           str(REPO / "playbooks" / "site.yml"), "--check", "--diff", *extra]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def _validation_errors(output):
    """The argument errors of the failed validation, each once, a boolean's list of valid values left out
    (Ansible prints that set in no fixed order)."""
    block = output.split("Validation of arguments failed:", 1)[1].split("Origin:", 1)[0]
    return sorted(re.sub(r" Valid booleans include: .*", "", line).strip() for line in block.strip().splitlines())


@pytest.mark.parametrize("variables, expected", [
    ({"gpu_operator_mig_strategy": "mixd"}, "value of gpu_operator_mig_strategy must be one of: none, single, mixed, got: mixd"),
    ({"gpu_operator_driver_enabled": "yes please"},
     "argument 'gpu_operator_driver_enabled' is of type str and we were unable to convert to bool: "
     "The value 'yes please' is not a valid boolean."),
    ({"gitlab_runner_state": "gone"}, "value of gitlab_runner_state must be one of: present, absent, got: gone"),
    ({"arc_runners_state": "gone"}, "value of arc_runners_state must be one of: present, absent, got: gone"),
], ids=["operator-choice", "operator-bool", "gitlab-choice", "arc-choice"])
def test_plan_refuses_what_site_refuses_by_the_argument_specs_with_the_same_messages(tmp_path, variables, expected):
    extra = tmp_path / "bad.yml"
    extra.write_text(yaml.safe_dump(variables))
    plan_rc, plan_output = run_plan(tmp_path, "-e", f"@{extra}")
    site_rc, site_output = _site_check("-e", f"@{extra}")
    assert plan_rc != 0 and site_rc != 0, plan_output[-3000:] + site_output[-3000:]
    assert any(line.startswith(expected) for line in _validation_errors(plan_output)), plan_output[-3000:]
    assert _validation_errors(plan_output) == _validation_errors(site_output)
