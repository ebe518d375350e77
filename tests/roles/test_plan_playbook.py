# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/plan.yml shows what site.yml would make, from the roles' own plans, touching no cluster.

Offline (tests/roles/offline_playbook.py): any task that reached for a
cluster would fail the run.
"""
from __future__ import annotations

import yaml

from offline_playbook import REPO, TOKENS, run_offline


def run_plan(out_dir, *extra):
    return run_offline("plan.yml", "gpuci_plan_dir", out_dir, *extra)


def test_plan_shows_the_local_inventory_without_a_cluster(tmp_path):
    plan_dir = tmp_path / "plans"  # not there yet, as `-e gpuci_plan_dir=plans` on a first run: the playbook makes it
    returncode, output = run_plan(plan_dir)
    assert returncode == 0, output[-4000:]
    assert "release gitlab-runner/gitlab-runner-l40s: chart gitlab-runner 0.86.0 (gitlab_runner)" in output
    assert "secret arc-runners/testbed-dri-github-config (arc_runners; data not shown)" in output
    written = (plan_dir / "testbed.yml").read_text()
    plan = yaml.safe_load(written)
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
