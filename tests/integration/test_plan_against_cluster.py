# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""playbooks/plan.yml against the testbed: it reads the cluster, changes nothing in it, and says what site would
add, change and remove, as `--check --diff` of the converge says it.

The four cases of a plan, in file order on one fleet of three CPU pools of its own: a fresh cluster (all adds),
the fleet converged and unchanged (no changes), a pool's concurrent changed (a change with its diff) and a pool
dropped from the inventory (a removal, named; one pool of three, so the converge's guard against removing a
whole fleet does not apply). The plan runs with --tags gitlab_runner, as `site --tags gitlab_runner` converges
only the GitLab runner role: the GPU Operator and ARC that other modules leave on the shared testbed stay out
of these lists (the plan says it did not compare them). What each case lists is read from the plan it writes
(gpuci_plan_dir), what it prints from its output.
"""
from __future__ import annotations

import uuid

import pytest
import yaml

from gitlab_runner_support import fleet_of_its_own, scoped_snapshot

PLAN = "plan.yml"
# The same converge as site.yml's, for the GitLab runner role alone.
CONVERGE = "gitlab_runner.yml"
FLEET = "plan-tests"
MANAGER_NS = "gitlab-runner-plan-test"
JOBS_NS = "gitlab-runner-plan-test-jobs"
OUR_NAMESPACES = {MANAGER_NS, JOBS_NS}
FLEET_SELECTOR = f"app.kubernetes.io/part-of=gpuci-runners,gpuci.runners/fleet={FLEET}"
POOLS = ("alpha", "beta", "gamma")
# Recognisable, unique per session, so a leak cannot be a coincidence.
RUN_ID = uuid.uuid4().hex[:12]
TOKENS = {pool: f"glrt-gpuci-plan-{pool}-{RUN_ID}" for pool in POOLS}


def pools(names=POOLS, beta_concurrent=2) -> list[dict]:
    concurrent = {"alpha": 1, "beta": beta_concurrent, "gamma": 1}
    return [{"name": name, "namespace": JOBS_NS, "concurrent": concurrent[name], "cpu_request": "100m",
             "memory_request": "64Mi", "token": TOKENS[name]} for name in names]


def fleet_vars(pool_list: list[dict], **extra) -> dict:
    return {"gitlab_runner_fleet": FLEET, "gitlab_runner_namespace": MANAGER_NS, "gitlab_runner_pools": pool_list,
            **extra}


def release(pool: str) -> str:
    return f"{MANAGER_NS}/gitlab-runner-{pool}"


def said(run) -> str:
    """The output with its line wrapping undone (the YAML callback folds long lines and quotes each item of a
    list, so a test looks for each line of a list on its own)."""
    return " ".join(run.output.split())


def leftovers(cluster) -> list[str]:
    return [o["metadata"]["name"] for kind in ("Namespace", "ServiceAccount")
            for o in cluster.list("v1", kind, label_selector=FLEET_SELECTOR)]


@pytest.fixture(scope="module")
def fleet(testbed, playbooks):
    """Start from nothing of this fleet (a run may have been interrupted); remove it at the end."""
    with fleet_of_its_own(testbed, playbooks, CONVERGE, fleet_vars([], gitlab_runner_state="absent"), leftovers):
        yield testbed


def plan(playbooks, cluster, tmp_path, pool_list) -> tuple[dict, str]:
    """Run the plan, assert it changed nothing in the cluster; return (the written plan, its output unwrapped)."""
    before = scoped_snapshot(cluster, OUR_NAMESPACES, set())
    run = playbooks.run(PLAN, extra_vars=fleet_vars(pool_list, gpuci_plan_dir=str(tmp_path)),
                        tags="gitlab_runner").assert_ok()
    assert scoped_snapshot(cluster, OUR_NAMESPACES, set()) == before, "the plan changed the cluster"
    leaked = [pool for pool, token in TOKENS.items() if token in run.output]
    assert not leaked, f"tokens of {leaked} in the plan's output"
    written = yaml.safe_load((tmp_path / "testbed.yml").read_text())
    assert written["cluster"] == {"looked": True, "why": ""}, written["cluster"]
    assert "GPU Operator: not compared, the tags of this run leave it out" in said(run)
    return written, said(run)


def check_diff(playbooks, cluster, pool_list) -> str:
    """The converge's --check --diff over the same inventory: its output unwrapped; the cluster unchanged."""
    before = scoped_snapshot(cluster, OUR_NAMESPACES, set())
    run = playbooks.run(CONVERGE, extra_vars=fleet_vars(pool_list), check=True, diff=True).assert_ok()
    assert scoped_snapshot(cluster, OUR_NAMESPACES, set()) == before, "check mode changed the cluster"
    return said(run)


def test_a_fresh_cluster_is_all_adds(fleet, playbooks, tmp_path):
    written, output = plan(playbooks, fleet, tmp_path, pools())
    part = written["changes"]["gitlab_runner"]
    assert part["change"] == [] and part["remove"] == [], part
    added = [item["what"] for item in part["add"]]
    expected = [f"Namespace {MANAGER_NS}", f"Namespace {JOBS_NS}"]
    for pool in POOLS:
        expected += [f"ServiceAccount {MANAGER_NS}/gitlab-runner-{pool}", f"Role {JOBS_NS}/gitlab-runner-{pool}",
                     f"RoleBinding {JOBS_NS}/gitlab-runner-{pool}",
                     f"Secret {MANAGER_NS}/gitlab-runner-{pool}-token (data not shown)",
                     f"release {release(pool)} (chart gitlab-runner 0.86.0)"]
    assert sorted(added) == sorted(expected)
    assert f"GitLab runner pools: {len(expected)} to add" in output
    assert f"add release {release('alpha')} (chart gitlab-runner 0.86.0)" in output


@pytest.fixture(scope="module")
def converged(fleet, playbooks):
    """The three pools converged: what the later cases start from."""
    return playbooks.run(CONVERGE, extra_vars=fleet_vars(pools())).assert_ok()


@pytest.mark.usefixtures("converged")
def test_an_unchanged_converged_cluster_has_no_changes(fleet, playbooks, tmp_path):
    written, output = plan(playbooks, fleet, tmp_path, pools())
    part = written["changes"]["gitlab_runner"]
    assert (part["add"], part["change"], part["remove"], part["notes"]) == ([], [], [], []), part
    assert "Read the cluster, changed nothing: site would change nothing" in output
    assert "GitLab runner pools: no changes" in output


@pytest.mark.usefixtures("converged")
def test_a_changed_value_is_a_change_with_its_diff(fleet, playbooks, tmp_path):
    changed = pools(beta_concurrent=3)
    written, output = plan(playbooks, fleet, tmp_path, changed)
    part = written["changes"]["gitlab_runner"]
    assert part["add"] == [] and part["remove"] == [], part
    assert part["change"] == [{"what": f"release {release('beta')}", "diff": ["concurrent: 2 -> 3"]}]
    listed = ["GitLab runner pools: 1 to change", f"change release {release('beta')}", "concurrent: 2 -> 3"]
    assert [line for line in listed if line not in output] == []
    # The converge's own check mode lists the same, from the same decision.
    checked = check_diff(playbooks, fleet, changed)
    assert [line for line in listed if line not in checked] == []


@pytest.mark.usefixtures("converged")
def test_a_pool_dropped_from_the_inventory_is_a_removal_named(fleet, playbooks, tmp_path):
    kept = pools(names=("alpha", "beta"))
    written, output = plan(playbooks, fleet, tmp_path, kept)
    part = written["changes"]["gitlab_runner"]
    assert part["add"] == [] and part["change"] == [], part
    assert [item["what"] for item in part["remove"]] == [
        f"pool gamma (release {release('gamma')})", f"ServiceAccount {MANAGER_NS}/gitlab-runner-gamma",
        f"Role {JOBS_NS}/gitlab-runner-gamma", f"RoleBinding {JOBS_NS}/gitlab-runner-gamma",
        f"Secret {MANAGER_NS}/gitlab-runner-gamma-token (data not shown)"]
    assert "GitLab runner pools: 5 to remove" in output and f"remove pool gamma (release {release('gamma')})" in output
    assert f"remove pool gamma (release {release('gamma')})" in check_diff(playbooks, fleet, kept)
    # Nothing was removed: the pool's manager is still there.
    assert fleet.get("apps/v1", "Deployment", "gitlab-runner-gamma", MANAGER_NS) is not None
