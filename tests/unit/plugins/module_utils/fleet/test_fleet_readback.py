# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""fleet_readback: each role checked against its plan, from the read-back when it read back, else from the read."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.filter.fleet_readback import FilterModule
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.readback import SIMULATED_NOTES, fleet_readback
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.readback import gpu_operator_readback
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

from test_gitlab_runner_readback import RELEASES, configmap, deployment

VALUES = {"driver": {"enabled": False}, "toolkit": {"enabled": True}, "cdi": {"enabled": True},
          "mig": {"strategy": "single"}, "devicePlugin": {"enabled": True}}
OPERATOR_PLAN = {"release": {"name": "gpu-operator", "values": VALUES}, "cluster_policy": "cluster-policy"}
GITLAB_PLAN = {"releases": RELEASES}
ARC_PLAN = {"by_scale_set": {}}


def policy(**spec_changes):
    spec = dict(VALUES, **spec_changes)
    return {"metadata": {"name": "cluster-policy"}, "spec": spec}


def operator_answers(*policies):
    return {"policy": {"resources": list(policies)}}


def gitlab_answers(configmaps=None):
    return {"configmaps": {"resources": [configmap(r) for r in RELEASES] if configmaps is None else configmaps},
            "managers": {"resources": [deployment(r) for r in RELEASES]}}


def settled():
    return {"readback": [], "settled": True}


def applied():
    return {"readback": [{"key": "policy", "kind": "ClusterPolicy"}], "settled": False}


def test_roles_that_hold_their_plan_are_verified_and_named_in_order():
    result = fleet_readback({
        "read": {"gpu_operator": operator_answers(policy()), "gitlab_runner": gitlab_answers(),
                 "arc_runners": {"runner_sets": {"resources": []}}},
        "readback": {},
        "roles": {"arc_runners": {"plan": ARC_PLAN, "pending": settled()},
                  "gitlab_runner": {"plan": GITLAB_PLAN, "pending": settled()},
                  "gpu_operator": {"plan": OPERATOR_PLAN, "pending": settled()}}})
    assert result == {"problems": [], "checked": ["gpu_operator", "gitlab_runner", "arc_runners"],
                      "summary": "Checked against their plans: gpu_operator, gitlab_runner, arc_runners. "
                                 "Their plans already in place, nothing to change: gpu_operator, gitlab_runner, "
                                 "arc_runners."}


def test_the_summary_names_only_the_roles_that_had_nothing_to_change():
    result = fleet_readback({
        "read": {"gitlab_runner": gitlab_answers()},
        "readback": {"gpu_operator": operator_answers(policy())},
        "roles": {"gpu_operator": {"plan": OPERATOR_PLAN, "pending": applied()},
                  "gitlab_runner": {"plan": GITLAB_PLAN, "pending": settled()}}})
    assert result["summary"] == ("Checked against their plans: gpu_operator, gitlab_runner. "
                                 "Their plans already in place, nothing to change: gitlab_runner.")


def test_a_role_that_read_back_is_checked_against_the_read_back_not_the_read():
    spec = {"read": {"gpu_operator": operator_answers(policy(driver={"enabled": True}))},
            "readback": {"gpu_operator": operator_answers(policy())},
            "roles": {"gpu_operator": {"plan": OPERATOR_PLAN, "pending": applied()}}}
    assert fleet_readback(spec)["problems"] == []
    spec["roles"]["gpu_operator"]["pending"] = settled()
    assert fleet_readback(spec)["problems"] == [
        "gpu_operator: ClusterPolicy cluster-policy does not carry the chosen settings: "
        "driver.enabled is True, the release's False"]


def test_every_roles_problems_come_prefixed_with_the_role():
    wrong = dict(configmap(RELEASES[0], config="concurrent = 99\n"))
    result = fleet_readback({
        "read": {"gpu_operator": operator_answers(), "gitlab_runner": gitlab_answers([wrong, configmap(RELEASES[1])])},
        "roles": {"gpu_operator": {"plan": OPERATOR_PLAN, "pending": settled()},
                  "gitlab_runner": {"plan": GITLAB_PLAN, "pending": settled()}}})
    assert result["problems"] == [
        "gpu_operator: expected one ClusterPolicy (cluster-policy); found 0",
        "gitlab_runner: ConfigMap %s/%s does not hold the config.toml rendered for pool %s"
        % (RELEASES[0]["namespace"], RELEASES[0]["name"], RELEASES[0]["values"]["runners"]["name"])]


def test_gitlab_without_a_present_pool_needs_no_answers_to_read():
    result = fleet_readback({"read": {"gitlab_runner": {}},
                             "roles": {"gitlab_runner": {"plan": {"releases": []}, "pending": settled()}}})
    assert result["problems"] == [] and result["checked"] == ["gitlab_runner"]


def test_the_simulated_note_comes_only_on_a_simulated_cluster_with_the_gpu_operator_checked():
    spec = {"read": {"gpu_operator": operator_answers(policy()), "gitlab_runner": gitlab_answers()},
            "roles": {"gpu_operator": {"plan": OPERATOR_PLAN, "pending": settled()}}, "simulated": True}
    assert fleet_readback(spec)["summary"].endswith(SIMULATED_NOTES["gpu_operator"])
    spec["simulated"] = False
    assert SIMULATED_NOTES["gpu_operator"] not in fleet_readback(spec)["summary"]
    spec.update(simulated=True, roles={"gitlab_runner": {"plan": GITLAB_PLAN, "pending": settled()}})
    assert fleet_readback(spec)["summary"] == ("Checked against their plans: gitlab_runner. "
                                               "Their plans already in place, nothing to change: gitlab_runner.")


def test_answers_missing_for_a_checked_role_are_named():
    with pytest.raises(ValidationError, match=r"^fleet_readback.readback: holds no answers of gpu_operator"):
        fleet_readback({"read": {"gpu_operator": operator_answers(policy())}, "readback": {},
                        "roles": {"gpu_operator": {"plan": OPERATOR_PLAN, "pending": applied()}}})


def test_an_unknown_role_or_key_is_refused_through_the_filter():
    check = FilterModule().filters()["fleet_readback"]
    with pytest.raises(AnsibleFilterError, match=r"gpuci.runners.fleet_readback: fleet_readback.roles.gpu_canary: unknown key"):
        check({"read": {}, "roles": {"gpu_canary": {}}})
    with pytest.raises(AnsibleFilterError, match=r"fleet_readback.roles.gpu_operator.plans: unknown key"):
        check({"read": {}, "roles": {"gpu_operator": {"plans": {}, "pending": settled()}}})


@pytest.mark.parametrize("changes, differing", [
    ({"toolkit": {"enabled": False}}, "toolkit.enabled is False, the release's True"),
    ({"cdi": {}}, "cdi.enabled is None, the release's True"),
    ({"mig": {"strategy": "mixed"}}, "mig.strategy is mixed, the release's single"),
])
def test_the_cluster_policy_must_carry_each_chosen_setting(changes, differing):
    problems = gpu_operator_readback({"values": VALUES, "cluster_policy": "cluster-policy",
                                      "policies": [policy(**changes)]})
    assert problems == ["ClusterPolicy cluster-policy does not carry the chosen settings: " + differing]


def test_settings_the_role_does_not_choose_may_differ():
    assert gpu_operator_readback({"values": VALUES, "cluster_policy": "cluster-policy",
                                  "policies": [policy(devicePlugin={"enabled": False}, dcgm={"enabled": True})]}) == []


def test_two_cluster_policies_are_one_too_many():
    assert gpu_operator_readback({"values": VALUES, "cluster_policy": "cluster-policy",
                                  "policies": [policy(), policy()]}) == [
        "expected one ClusterPolicy (cluster-policy); found 2"]


def test_the_converge_gives_its_changes_and_the_plans():
    changes = {"verified": ["gitlab_runner"], "gitlab_runner": {"pending": {"settled": True, "readback": []}},
               "arc_runners": {"pending": {"settled": True, "readback": []}}}
    result = fleet_readback({"read": {"gitlab_runner": gitlab_answers()}, "readback": {},
                             "plans": {"gitlab_runner": GITLAB_PLAN, "arc_runners": ARC_PLAN}, "changes": changes})
    assert result["checked"] == ["gitlab_runner"]
    none = fleet_readback({"read": {}, "readback": {}, "plans": {}, "changes": {"verified": []}})
    assert none["checked"] == [] and none["problems"] == []
