# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""role_plan (plugins/action/role_plan.py): one step makes a role's plan (its plan filter's) and refuses its problems.

The result is the plan, which each role's task registers as ``__<role>_plan``.
"""
import pathlib

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.plan import NOTHING_DECLARED
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import gitlab_runner_plan
from ansible_collections.gpuci.runners.plugins.action.role_plan import ROLE_PLANS, role_plan

ROLES = pathlib.Path(__file__).resolve().parents[4] / "roles"
POOL = {"name": "l40s", "gpu_class": "l40s", "gpus": 1, "token": "glrt-PLAN-SECRET"}


def settings(role, **overrides):
    """The role's defaults as its tasks pass them (read from the role), with overrides."""
    defaults = yaml.safe_load((ROLES / role / "defaults" / "main.yml").read_text())
    prefix = "gpu_canary_" if role == "gpu_canary" else role + "_"
    return dict(dict((key, value) for key, value in defaults.items() if key.startswith(prefix)), **overrides)


def gitlab(**overrides):
    return settings("gitlab_runner", **dict({"gitlab_runner_pools": [POOL],
                                            "gitlab_runner_gitlab_url": "https://gitlab.example.com/"}, **overrides))


def test_the_result_is_the_filters_plan_and_no_fact():
    result = role_plan("gitlab_runner", gitlab())
    assert result == dict(gitlab_runner_plan(gitlab()), changed=False)
    assert result["problems"] == [] and "ansible_facts" not in result


def test_every_problem_is_refused_in_one_message_naming_the_inventory_path():
    pools = [dict(POOL, gpus="two"), dict(POOL, name="Bad_Name")]
    result = role_plan("gitlab_runner", gitlab(gitlab_runner_pools=pools))
    assert result["failed"] is True
    assert "gitlab_runner_pools[name=l40s].gpus" in result["msg"] and "Bad_Name" in result["msg"]
    assert result["msg"].count("; ") >= 1
    # The run stops: the message is the whole answer, without the plan.
    assert set(result) == {"changed", "failed", "msg"}
    assert "glrt-PLAN-SECRET" not in repr(result)


def test_refuse_false_keeps_the_plan_without_failing():
    bad = settings("gpu_operator", gpu_operator_values={"mig": {"strategy": "mixed"}})
    assert role_plan("gpu_operator", bad)["failed"] is True
    kept = role_plan("gpu_operator", bad, refuse=False)
    assert "failed" not in kept and kept["problems"]


def test_the_gpu_operators_plan_warnings_are_ansible_warnings():
    assert role_plan("gpu_operator", settings("gpu_operator"))["warnings"] == []
    warned = role_plan("gpu_operator", settings("gpu_operator", gpu_operator_values={"operator": {"defaultRuntime": "crio"}}))
    # The plan's warnings are the result's: Ansible shows them.
    assert warned["warnings"][0].startswith("gpu_operator_values.operator.defaultRuntime is removed")


def test_arc_notes_when_nothing_of_it_is_declared_and_only_then():
    # The action shows the notes as a line (test_fleet_decide_output.py runs it), never the whole plan.
    nothing = role_plan("arc_runners", settings("arc_runners", arc_runners_state="present"))
    assert nothing["notes"] == [NOTHING_DECLARED] and "_ansible_verbose_always" not in nothing
    assert role_plan("arc_runners", settings("arc_runners", arc_runners_state="absent"))["notes"] == []
    assert role_plan("arc_runners", settings("arc_runners", arc_runners_controller_enabled=True))["notes"] == []


def test_the_canary_plans_too():
    canary = settings("gpu_canary", gpu_canary_gitlab_pools=[POOL], gpu_canary_arc_scale_sets=[],
                      gitlab_runner_pools=[POOL], arc_runners_scale_sets=None)
    result = role_plan("gpu_canary", canary)
    assert "failed" not in result and result["problems"] == [] and "lanes" in result


def test_a_malformed_input_fails_as_the_filter_does():
    with pytest.raises(AnsibleFilterError, match="gpuci.runners.gitlab_runner_plan: "):
        role_plan("gitlab_runner", gitlab(gitlab_runner_pools="l40s"))


def test_each_role_registers_its_plan_under_its_own_name():
    for role in ROLE_PLANS:
        tasks = yaml.safe_load((ROLES / role / "tasks" / "preflight.yml").read_text())
        [planning] = [task for task in tasks if "gpuci.runners.role_plan" in task]
        assert planning["gpuci.runners.role_plan"]["role"] == role
        assert planning["register"] == "__%s_plan" % role


def test_a_problem_several_checks_meet_is_refused_once(monkeypatch):
    twice = "gitlab_runner_gitlab_url: must be an http(s) URL such as https://gitlab.example.com (got 'https:/x')"
    monkeypatch.setitem(ROLE_PLANS, "gitlab_runner", (lambda settings, gpu_classes=None: {
        "problems": [twice, "gitlab_runner_namespace: must be a DNS label", twice]}, "; "))
    assert role_plan("gitlab_runner", gitlab())["msg"] == twice + "; gitlab_runner_namespace: must be a DNS label"


def test_a_plan_with_chart_repository_credentials_is_never_shown():
    from ansible_collections.gpuci.runners.plugins.action.role_plan import shown
    plain = role_plan("gitlab_runner", gitlab())
    assert "_ansible_no_log" not in shown(plain)
    private = role_plan("gitlab_runner", gitlab(gitlab_runner_chart_repo_url="https://deploy:s3cret@charts.example.com/"))
    assert "s3cret" in repr(private), "the plan keeps the URL as written: helm_releases needs it"
    assert shown(private)["_ansible_no_log"] is True
    refused = role_plan("gitlab_runner", gitlab(gitlab_runner_pools=[dict(POOL, gpus="two")],
                                                gitlab_runner_chart_repo_url="https://deploy:s3cret@charts.example.com/"))
    assert refused["failed"] and "_ansible_no_log" not in shown(refused), "a refusal is shown whole"
