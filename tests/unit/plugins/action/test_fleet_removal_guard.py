# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The second guard against an inventory mistake: a converge that would remove every pool the cluster holds
while the inventory declares none of them is refused before any change (gitlab_runner/removals.py
whole_fleet_refusal, through fleet_decide), unless the user asked for it."""
import pytest

from ansible_collections.gpuci.runners.plugins.action.fleet_decide import decision
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.decide import fleet_decide
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import gitlab_runner_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.removals import (
    gitlab_runner_removals,
    whole_fleet_refusal,
)

from test_role_plan_action import POOL, gitlab

HELD = ["l40s", "a100", "cpu"]


def accounts(names, namespace="gitlab-runner"):
    """The manager ServiceAccounts the role left for each pool, as the converge's read answers them."""
    return {"gitlab_runner": {"accounts": {"resources": [
        {"metadata": {"name": "gitlab-runner-" + name, "namespace": namespace}} for name in names]}}}


def decide(pools, held=None, check_mode=False, **settings):
    held = HELD if held is None else held
    plan = gitlab_runner_plan(gitlab(gitlab_runner_pools=pools, **settings))
    return fleet_decide({"gitlab_runner": {"plan": plan, "pools": pools}}, accounts(held), check_mode=check_mode)


@pytest.mark.parametrize("check_mode", [False, True])
def test_a_lost_pool_list_would_prune_the_whole_fleet_and_is_refused_naming_every_release(check_mode):
    outcome, refusals = decide([], check_mode=check_mode)
    assert len(refusals) == 1, refusals
    (refusal,) = refusals
    for name in HELD:
        assert "gitlab-runner/gitlab-runner-%s" % name in refusal
    assert refusal.startswith("gitlab_runner_pools: ")
    assert "declares no pool" in refusal and "fleet default" in refusal
    # How to ask for it, by the switch's name and by the fleet's state.
    assert "gitlab_runner_allow_removing_all_pools: true" in refusal and "gitlab_runner_state: absent" in refusal
    # Refused before anything was decided to apply.
    assert outcome["gitlab_runner"]["pending"] == {} and outcome["releases"] == []


def test_the_action_fails_with_the_refusal_shown():
    plan = gitlab_runner_plan(gitlab(gitlab_runner_pools=[]))
    result = decision({"roles": {"gitlab_runner": {"plan": plan, "pools": []}}, "read": accounts(HELD)}, False)
    assert result["failed"] is True and "_ansible_no_log" not in result
    assert "gitlab-runner/gitlab-runner-cpu" in result["msg"]


def test_new_names_only_are_refused_too_naming_what_the_inventory_declares():
    """Every pool the cluster holds would go and none of them is declared: the same mistake, or a rename of
    the whole fleet at once, which the switch allows."""
    _outcome, refusals = decide([dict(POOL, name="new")])
    assert len(refusals) == 1 and "declares only new" in refusals[0]


def test_the_switch_lets_the_converge_remove_every_pool_and_names_them_first():
    outcome, refusals = decide([], gitlab_runner_allow_removing_all_pools=True)
    assert refusals == []
    removals = outcome["gitlab_runner"]["removals"]
    assert removals["names"] == HELD
    assert [release["name"] for release in removals["releases"]] == ["gitlab-runner-" + name for name in HELD]
    # Named before it happens: the converge's words of what will change.
    assert ["remove pool " + name for name in HELD] == [
        step for step in outcome["gitlab_runner"]["pending"]["steps"] if step.startswith("remove pool")]


def test_state_absent_removes_the_fleet_without_the_switch():
    outcome, refusals = decide([], gitlab_runner_state="absent")
    assert refusals == [] and outcome["gitlab_runner"]["removals"]["names"] == HELD


@pytest.mark.parametrize("pools, removed", [
    # One pool the cluster holds is declared: the inventory knows the fleet, the others are pruned.
    ([dict(POOL, name="l40s")], ["a100", "cpu"]),
    # Every pool declared absent: asked for by name.
    ([{"name": name, "state": "absent", "token": "glrt-x"} for name in HELD], HELD),
    # Every pool declared: nothing goes.
    ([dict(POOL, name=name) for name in HELD], []),
])
def test_an_inventory_that_declares_a_pool_the_cluster_holds_is_not_refused(pools, removed):
    outcome, refusals = decide(pools)
    assert refusals == []
    assert outcome["gitlab_runner"]["removals"]["names"] == removed


def test_without_prune_nothing_undeclared_goes_so_nothing_is_refused():
    outcome, refusals = decide([], gitlab_runner_prune=False)
    assert refusals == [] and outcome["gitlab_runner"]["removals"]["names"] == []


def test_an_empty_cluster_and_an_empty_inventory_are_not_refused():
    assert decide([], held=[])[1] == []


def test_the_rule_itself_over_removals_of_a_cluster_with_pools_in_two_namespaces():
    """Releases are named where they are, not where the inventory would put them."""
    found = [{"name": "gitlab-runner-a", "namespace": "ns-a"}, {"name": "gitlab-runner-b", "namespace": "ns-b"}]
    settings = {"state": "present", "prune": True, "namespace": "gitlab-runner", "timeout": 60}
    removals = gitlab_runner_removals(dict(settings, pools=[], found=found))
    assert removals["found_pools"] == ["a", "b"]
    refusal = whole_fleet_refusal([], removals, dict(settings, fleet="team-a"))
    assert "releases ns-a/gitlab-runner-a, ns-b/gitlab-runner-b" in refusal and "fleet team-a" in refusal
    assert whole_fleet_refusal([], removals, dict(settings, fleet="team-a", allow_removing_all=True)) == ""
