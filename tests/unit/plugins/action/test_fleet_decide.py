# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""fleet_decide (module_utils/fleet/decide.py, plugins/action/fleet_decide.py): each cluster role's decision from
its real plan and recorded answers of the cluster, in one step, its Secrets never shown."""
import base64

import pytest
from ansible.errors import AnsibleError

from ansible_collections.gpuci.runners.plugins.action.fleet_decide import decision
from ansible_collections.gpuci.runners.plugins.module_utils.fleet import decide as module
from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.plan import arc_runners_plan
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.decide import fleet_decide
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import gitlab_runner_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.plan import gpu_operator_plan

from test_role_plan_action import POOL, gitlab, settings

TOKEN = "glrt-PLAN-SECRET"
GITHUB_TOKEN = "ghp_DECIDE-SECRET"
SCALE_SET = {"name": "a10", "github_config_url": "https://github.com/octo/repo", "github_token": GITHUB_TOKEN,
             "gpu_class": "a10", "gpus": 1}


def operator_plan(**overrides):
    return gpu_operator_plan(settings("gpu_operator", **overrides))


def arc_plan():
    return arc_runners_plan(settings("arc_runners", arc_runners_scale_sets=[SCALE_SET]))


def roles(operator=True, runners=True, arc=True):
    chosen = {}
    if operator:
        chosen["gpu_operator"] = {"plan": operator_plan()}
    if runners:
        chosen["gitlab_runner"] = {"plan": gitlab_runner_plan(gitlab()), "pools": [POOL]}
    if arc:
        chosen["arc_runners"] = {"plan": arc_plan(), "scale_sets": [SCALE_SET]}
    return chosen


def answers(**reads):
    """Recorded answers of k8s_reads by role: {role: {key: [objects]}}."""
    return {role: {key: {"resources": objects} for key, objects in keys.items()} for role, keys in reads.items()}


def decision_of(*args, **options):
    return fleet_decide(*args, **options)[0]


def refusals_of(*args, **options):
    return fleet_decide(*args, **options)[1]


def policy(release, namespace):
    return {"kind": "ClusterPolicy", "metadata": {"name": "cluster-policy", "annotations": {
        "meta.helm.sh/release-name": release, "meta.helm.sh/release-namespace": namespace}}}


ALL = ["decide", "apply", "verify"]


def test_an_empty_cluster_leaves_every_role_something_to_apply():
    outcome, refusals = fleet_decide(roles(), answers())
    assert refusals == []
    assert outcome["decided"] == ["gpu_operator", "gitlab_runner", "arc_runners"]
    assert outcome["pending"] is True
    for role in ("gpu_operator", "gitlab_runner", "arc_runners"):
        assert outcome[role]["pending"]["settled"] is False
        assert outcome[role]["pending"]["apply_releases"], role
    summary = outcome["summary"]
    assert [line.split(":")[0] for line in summary] == ["GPU Operator", "GitLab runner pools", "ARC"]
    assert all("To change:" in line for line in summary)


def test_the_converges_lists_are_those_of_the_roles_whose_steps_run_in_order():
    steps = {"gitlab_runner": ALL, "arc_runners": ALL}
    outcome = decision_of(roles(), answers(), steps=steps)
    runners, arc = outcome["gitlab_runner"]["pending"], outcome["arc_runners"]["pending"]
    assert outcome["decided"] == ["gitlab_runner", "arc_runners"]
    assert outcome["releases"] == runners["apply_releases"] + arc["apply_releases"]
    assert outcome["readback"] == runners["readback"] + arc["readback"]
    assert outcome["objects"] == runners["apply"] + [o for o in arc["apply"] if o not in runners["apply"]]
    assert outcome["finish"] == outcome["verified"] == ["gitlab_runner", "arc_runners"]
    names = [release["name"] for release in outcome["releases"]]
    assert names[0] == "gitlab-runner-l40s" and "gpu-operator" not in names


def test_a_role_without_its_apply_step_decides_and_is_checked_but_applies_nothing():
    outcome = decision_of(roles(), answers(), steps={"gitlab_runner": ["decide", "verify"], "arc_runners": ["decide"]})
    assert outcome["objects"] == [] and outcome["releases"] == [] and outcome["create_runners"] == []
    # Read back only what a verify step checks; finished (pruning, restarts) whatever its tags: its tasks have theirs.
    assert outcome["readback"] == outcome["gitlab_runner"]["pending"]["readback"]
    assert outcome["verified"] == ["gitlab_runner"] and outcome["finish"] == ["gitlab_runner", "arc_runners"]
    assert outcome["pending"] is True


def test_settled_roles_leave_the_converge_nothing_to_do():
    outcome = decision_of(roles(), answers(), steps={"gitlab_runner": ALL})
    settled = dict(outcome["gitlab_runner"]["pending"], settled=True, apply=[], apply_releases=[], readback=[])
    converge = module._converge({"gitlab_runner": {"pending": settled}, "decided": ["gitlab_runner"]},
                                {"gitlab_runner": ALL})
    assert converge == {"pending": False, "summary": ["GitLab runner pools: " + settled["summary"]], "objects": [],
                        "releases": [], "create_runners": [], "readback": [], "finish": [],
                        "verified": ["gitlab_runner"],
                        "changes": {"roles": {"gitlab_runner": {"name": "GitLab runner pools", "add": [], "change": [],
                                                                "remove": [], "notes": []}},
                                    "lines": ["GitLab runner pools: no changes"], "none": True}}


def test_runners_the_role_creates_get_their_secrets_after_gitlab_answers():
    created = dict(POOL, name="made", token="")
    plan = gitlab_runner_plan(gitlab(gitlab_runner_pools=[POOL, created], gitlab_runner_access_token="glpat-x"))
    outcome = decision_of({"gitlab_runner": {"plan": plan, "pools": [POOL, created]}}, answers())
    part = outcome["gitlab_runner"]
    assert outcome["create_runners"] == part["created_pools"] == ["made"]
    assert [secret["pool"] for secret in part["created_secrets"]] == ["made"]
    # Not among the objects the decision applies: its token comes from GitLab.
    assert [o["metadata"]["name"] for o in outcome["objects"] if o["kind"] == "Secret"] == ["gitlab-runner-l40s-token"]
    # In check mode a namespace the run would create does not exist: no Secret there.
    checked = decision_of({"gitlab_runner": {"plan": plan, "pools": [POOL, created]}}, answers(), check_mode=True)
    assert checked["create_runners"] == ["made"] and checked["gitlab_runner"]["created_secrets"] == []


def test_arc_prunes_what_a_present_scale_set_no_longer_uses():
    plan = arc_plan()
    label = plan["scale_set_label"]
    old = {"kind": "Secret", "metadata": {"name": "a10-old", "namespace": "arc-runners", "labels": {label: "a10"}}}
    outcome = decision_of({"arc_runners": {"plan": plan, "scale_sets": [SCALE_SET]}},
                          answers(arc_runners={"secrets": [old]}))
    assert outcome["arc_runners"]["removals"] == {"secrets": [{"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": "a10-old", "namespace": "arc-runners"}}], "configmaps": []}


def test_the_inventory_secrets_reach_only_the_objects_to_apply():
    outcome = decision_of(roles(operator=False), answers())
    token_secret = next(o for o in outcome["gitlab_runner"]["pending"]["apply"] if o["kind"] == "Secret")
    assert base64.b64decode(token_secret["data"]["runner-token"]).decode() == TOKEN
    credentials = next(o for o in outcome["arc_runners"]["pending"]["apply"] if o["kind"] == "Secret")
    assert base64.b64decode(credentials["data"]["github_token"]).decode() == GITHUB_TOKEN
    # The words of what will change name objects, never their data.
    shown = repr([outcome["gitlab_runner"]["pending"]["summary"], outcome["arc_runners"]["pending"]["summary"]])
    assert TOKEN not in shown and GITHUB_TOKEN not in shown


def test_a_gitlab_runner_role_with_state_absent_decides_removals_only():
    plan = gitlab_runner_plan(gitlab(gitlab_runner_state="absent"))
    account = {"metadata": {"name": "gitlab-runner-old", "namespace": "gitlab-runner"}}
    outcome = decision_of({"gitlab_runner": {"plan": plan, "pools": [POOL]}},
                          answers(gitlab_runner={"accounts": [account]}))
    assert outcome["gitlab_runner"]["pending"] == {}
    assert outcome["gitlab_runner"]["removals"]["names"] == ["old", "l40s"]


def test_removals_follow_prune_from_the_plan():
    account = {"metadata": {"name": "gitlab-runner-forgotten", "namespace": "gitlab-runner"}}
    # The declared pool is on the cluster too: pruning the other one leaves the fleet (test_fleet_removal_guard.py).
    kept = {"metadata": {"name": "gitlab-runner-l40s", "namespace": "gitlab-runner"}}
    for prune, expected in ((True, ["forgotten"]), (False, [])):
        plan = gitlab_runner_plan(gitlab(gitlab_runner_prune=prune))
        outcome = decision_of({"gitlab_runner": {"plan": plan, "pools": [POOL]}},
                              answers(gitlab_runner={"accounts": [account, kept]}))
        assert outcome["gitlab_runner"]["removals"]["names"] == expected
        assert ("remove pool forgotten" in outcome["gitlab_runner"]["pending"]["steps"]) is prune


def test_a_second_gpu_operator_is_refused_and_the_own_release_is_not():
    plan = operator_plan()
    release = plan["release"]
    refusals = refusals_of({"gpu_operator": {"plan": plan}},
                           answers(gpu_operator={"policy": [policy("other", "elsewhere")]}))
    assert len(refusals) == 1 and "other" in refusals[0] and "elsewhere" in refusals[0]
    refusals = refusals_of({"gpu_operator": {"plan": plan}},
                           answers(gpu_operator={"policy": [policy(release["name"], release["namespace"])]}))
    assert refusals == []


def test_the_operator_deployment_is_awaited_by_name_until_it_exists():
    outcome = decision_of({"gpu_operator": {"plan": operator_plan()}}, answers())
    assert outcome["gpu_operator"]["pending"]["unavailable"] == ["Deployment gpu-operator"]


def test_nodes_of_a_time_sliced_class_are_labelled_and_counted_pending():
    plan = operator_plan(gpu_operator_time_slicing={"a10": 4})
    assert plan["time_slicing"]["label_classes"] == ["a10"], plan["time_slicing"]
    node = {"kind": "Node", "metadata": {"name": "gpu-1", "labels": plan["time_slicing"]["class_selectors"]["a10"]}}
    outcome = decision_of({"gpu_operator": {"plan": plan}}, answers(gpu_operator={"nodes": [node]}))
    patches = outcome["gpu_operator"]["node_patches"]
    assert [patch["name"] for patch in patches] == ["gpu-1"]
    assert patches[0]["summary"] in outcome["gpu_operator"]["pending"]["steps"]


def test_each_role_reads_only_answers_its_plan_asks_for(monkeypatch):
    asked = {}

    class Recording(module._Answers):
        def __init__(self, groups, role):
            super().__init__(groups, role)
            self.role = role

        def __call__(self, key):
            asked.setdefault(self.role, set()).add(key)
            return super().__call__(key)

    monkeypatch.setattr(module, "_Answers", Recording)
    chosen = roles()
    fleet_decide(chosen, answers())
    for role, entry in chosen.items():
        planned = {read["key"] for read in entry["plan"]["reads"]}
        assert asked[role] <= planned, "%s decides from answers it never reads: %s" % (role, asked[role] - planned)


def test_only_the_roles_whose_decide_step_runs_decide():
    outcome = decision_of(roles(), answers(), steps={"gpu_operator": ["verify"], "arc_runners": ALL})
    assert outcome["decided"] == ["arc_runners"]
    assert sorted(key for key in outcome if key in module.ROLES) == ["arc_runners"]


def test_a_role_alone_with_state_absent_decides_its_removals_only():
    chosen = {"gitlab_runner": {"plan": gitlab_runner_plan(gitlab(gitlab_runner_state="absent")), "pools": []}}
    alone = decision_of(chosen, answers())
    assert alone["decided"] == ["gitlab_runner"] and "removals" in alone["gitlab_runner"]
    assert alone["pending"] is False and alone["finish"] == [] and alone["verified"] == []


def test_an_unknown_role_is_named():
    with pytest.raises(ValueError, match="no decision for gpu_canary"):
        fleet_decide({"gpu_canary": {"plan": {}}}, {})


def test_the_action_hides_its_decision_and_shows_a_refusal():
    params = {"roles": roles(operator=False), "read": answers(), "steps": None}
    result = decision(params, check_mode=False)
    # Ansible censors a result marked so at every verbosity, as a no_log task's.
    assert result["_ansible_no_log"] is True and "pending" in result["gitlab_runner"]
    # A result to register, never facts: Ansible's fact cache (jsonfile, redis, AWX) would keep the Secrets.
    assert "ansible_facts" not in result and result["changed"] is False
    refused = decision(dict(params, roles={"gpu_operator": {"plan": operator_plan()}},
                            read=answers(gpu_operator={"policy": [policy("other", "elsewhere")]})), check_mode=False)
    assert refused["failed"] is True and "_ansible_no_log" not in refused and "ansible_facts" not in refused
    assert "there can be only one per cluster" in refused["msg"]


def test_check_mode_reads_nothing_back():
    params = {"roles": roles(), "read": answers(), "steps": None}
    checked = decision(params, check_mode=True)
    assert all(checked[role]["pending"]["readback"] == [] for role in checked["decided"])
    real = decision(params, check_mode=False)
    assert any(real[role]["pending"]["readback"] for role in real["decided"])


def test_a_plan_without_what_decisions_need_is_our_error_not_the_inventorys():
    with pytest.raises(AnsibleError, match="fleet_decide"):
        decision({"roles": {"gpu_operator": {"plan": {"converges": True}}}, "read": {}, "steps": None},
                 check_mode=False)


def test_the_gitlab_podmonitor_follows_the_crd_and_on_without_it_is_refused_before_any_change():
    crd = [{"kind": "CustomResourceDefinition", "metadata": {"name": "podmonitors.monitoring.coreos.com"}}]

    def monitor(outcome):
        return outcome["releases"][0]["values"]["metrics"]["podMonitor"]["enabled"]

    with_crd = decision_of(roles(operator=False, arc=False), answers(gitlab_runner={"pod_monitor_crd": crd}))
    assert monitor(with_crd) is True
    assert monitor(decision_of(roles(operator=False, arc=False), answers())) is False
    chosen = {"gitlab_runner": {"plan": gitlab_runner_plan(gitlab(gitlab_runner_pod_monitors="on")), "pools": [POOL]}}
    outcome, refusals = fleet_decide(chosen, answers())
    assert refusals == ["gitlab_runner_pod_monitors: is on, but the cluster has no CustomResourceDefinition "
                        "podmonitors.monitoring.coreos.com (install the Prometheus Operator's CRDs, or set it to auto "
                        "or off)"]
    assert outcome["gitlab_runner"]["pending"] == {}
    # A role on its way out needs no monitor, whatever the cluster has.
    absent = {"gitlab_runner": {"plan": gitlab_runner_plan(gitlab(gitlab_runner_pod_monitors="on",
                                                                  gitlab_runner_state="absent")), "pools": [POOL]}}
    assert refusals_of(absent, answers()) == []


def test_arc_applies_its_pod_monitors_where_the_crd_is_and_prunes_those_no_longer_wanted():
    crd = [{"kind": "CustomResourceDefinition", "metadata": {"name": "podmonitors.monitoring.coreos.com"}}]
    outcome = decision_of(roles(operator=False, runners=False), answers(arc_runners={"pod_monitor_crd": crd}))
    applied = [obj["metadata"]["name"] for obj in outcome["objects"] if obj["kind"] == "PodMonitor"]
    assert applied == ["gpuci-arc-controller", "gpuci-arc-listeners"]
    without = decision_of(roles(operator=False, runners=False), answers())
    assert [obj for obj in without["objects"] if obj["kind"] == "PodMonitor"] == []
    old = {"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
           "metadata": {"name": "gpuci-arc-old", "namespace": "arc-systems", "labels": {}}, "spec": {}}
    pruned = decision_of(roles(operator=False, runners=False),
                         answers(arc_runners={"pod_monitor_crd": crd, "pod_monitors": [old]}))
    assert pruned["arc_runners"]["stale_monitors"] == [
        {"apiVersion": "monitoring.coreos.com/v1", "kind": "PodMonitor",
         "metadata": {"name": "gpuci-arc-old", "namespace": "arc-systems"}}]
    assert "remove PodMonitor arc-systems/gpuci-arc-old" in pruned["arc_runners"]["pending"]["summary"]
    plan = arc_runners_plan(settings("arc_runners", arc_runners_scale_sets=[SCALE_SET], arc_runners_pod_monitors="on"))
    refusals = refusals_of({"arc_runners": {"plan": plan, "scale_sets": [SCALE_SET]}}, answers())
    assert refusals == ["arc_runners_pod_monitors: is on, but the cluster has no CustomResourceDefinition "
                        "podmonitors.monitoring.coreos.com (install the Prometheus Operator's CRDs, or set it to auto "
                        "or off)"]


def test_the_dcgm_service_monitor_follows_the_crd_and_on_without_it_is_refused():
    crd = [{"kind": "CustomResourceDefinition", "metadata": {"name": "servicemonitors.monitoring.coreos.com"}}]

    def monitor(outcome):
        (release,) = outcome["releases"]
        return release["values"]["dcgmExporter"]["serviceMonitor"]["enabled"]

    alone = roles(runners=False, arc=False)
    assert monitor(decision_of(alone, answers(gpu_operator={"service_monitor_crd": crd}))) is True
    assert monitor(decision_of(alone, answers())) is False
    refusals = refusals_of({"gpu_operator": {"plan": operator_plan(gpu_operator_dcgm_service_monitor="on")}}, answers())
    assert refusals == ["gpu_operator_dcgm_service_monitor: is on, but the cluster has no CustomResourceDefinition "
                        "servicemonitors.monitoring.coreos.com (install the Prometheus Operator's CRDs, or set it to "
                        "auto or off)"]
