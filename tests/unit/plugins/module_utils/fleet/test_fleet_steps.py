# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""fleet_steps: which planned cluster roles the converge serves and which of their steps the run's tags select,
by Ansible's own rule for a task with the step's tags (the filter's); the tags are the converge role's."""
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.filter.fleet_steps import FilterModule, selector
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.steps import ROLES, STEPS, fleet_steps

REPO = Path(__file__).resolve().parents[5]
# The converge role's own table: what these tests choose with is what the role runs with.
TAGS = yaml.safe_load((REPO / "roles/converge/vars/main.yml").read_text())["_converge_tags"]


def plan(role, converges=True):
    return {"converges": converges, "reads": [{"group": role, "key": "k", "kind": "Namespace"}]}


PLANS = {role: plan(role) for role in ROLES}


def steps(run_tags=("all",), skip_tags=(), plans=None):
    value = {"plans": PLANS if plans is None else plans, "tags": TAGS, "run_tags": list(run_tags),
             "skip_tags": list(skip_tags)}
    return FilterModule().filters()["fleet_steps"](value)


def test_the_table_names_every_step_of_every_role():
    assert sorted(TAGS) == sorted(ROLES)
    assert all(sorted(TAGS[role]) == sorted(STEPS) for role in ROLES)


@pytest.mark.parametrize("run_tags, skip_tags, expected", [
    (["all"], [], {role: list(STEPS) for role in ROLES}),
    (["gitlab_runner"], [], {"gitlab_runner": list(STEPS)}),
    (["gitlab_runner_install"], [], {"gitlab_runner": ["decide", "apply"]}),
    (["gitlab_runner_verify"], [], {"gitlab_runner": ["decide", "verify"]}),
    (["gitlab_runner_prune"], [], {"gitlab_runner": ["decide"]}),
    # The preflight tag checks the inventory without a cluster; the operator's refuses a second operator too.
    (["gitlab_runner_preflight"], [], {}),
    (["gpu_operator_preflight"], [], {"gpu_operator": ["decide"]}),
    (["gpu_operator_verify", "arc_runners_scale_sets"], [],
     {"gpu_operator": ["decide", "verify"], "arc_runners": ["decide", "apply"]}),
    (["arc_runners_controller"], [], {"arc_runners": ["decide", "apply"]}),
    (["all"], ["gitlab_runner"], {"gpu_operator": list(STEPS), "arc_runners": list(STEPS)}),
    # Skipping a tag the decision carries too leaves the role out: its other steps act on the decision.
    (["all"], ["gitlab_runner_verify"], {"gpu_operator": list(STEPS), "arc_runners": list(STEPS)}),
    (["tagged"], [], {role: list(STEPS) for role in ROLES}),
    (["container_toolkit"], [], {}),
    (["all"], ["all"], {}),
])
def test_the_run_tags_choose_the_roles_and_their_steps(run_tags, skip_tags, expected):
    result = steps(run_tags, skip_tags)
    assert result["roles"] == expected
    assert result["reads"] == [read for role in ROLES if "decide" in expected.get(role, [])
                               for read in PLANS[role]["reads"]]


def test_only_planned_roles_that_converge_take_part():
    plans = {"gitlab_runner": plan("gitlab_runner"), "arc_runners": plan("arc_runners", converges=False),
             "gpu_operator": {"skipped": True}}
    assert steps(plans=plans)["roles"] == {"gitlab_runner": list(STEPS)}
    assert steps(plans={"gitlab_runner": None})["roles"] == {}


def test_the_selector_is_ansibles_rule_for_tagged_tasks():
    assert selector(["all"], [])(["a", "b"])
    assert selector(["b", "a"], [])(["a"])
    assert not selector(["b"], [])(["a"])
    assert not selector(["all"], ["a"])(["a"])
    assert not selector(["all"], ["tagged"])(["a"])
    assert selector(["tagged"], [])(["a"])


def test_a_missing_step_or_an_unknown_role_is_named():
    with pytest.raises(ValidationError, match="names no tags of verify"):
        fleet_steps({"plans": {"gitlab_runner": plan("gitlab_runner")},
                     "tags": {"gitlab_runner": {"decide": ["x"], "apply": ["x"]}}}, lambda tags: True)
    with pytest.raises(AnsibleFilterError, match="no converge for gpu_canary"):
        steps(plans={"gpu_canary": plan("gpu_canary")})
