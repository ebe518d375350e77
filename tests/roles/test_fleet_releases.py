# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One converge: every playbook that converges a cluster role runs the role gpuci.runners.converge after it.

Each cluster role only checks and plans (main.yml; with state absent it
removes what it made). The converge role then reads the cluster once for
every planned role (their plans' reads), decides in one fleet_decide step,
applies every role's objects in one kubernetes.core.k8s task and every
release in one helm_releases task, reads back once, lets each role finish
(its tasks/finish.yml) and checks every role against its plan in one
fleet_readback task. No role carries a copy of these steps, and the
converge names only the roles' registered plans, so it works with
private_role_vars.
"""
import pathlib
import re

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
CLUSTER_ROLES = ["gpu_operator", "gitlab_runner", "arc_runners"]
CONVERGE = REPO / "roles" / "converge"


def load(path):
    return yaml.safe_load((REPO / path).read_text())


def converge_tasks():
    return load("roles/converge/tasks/main.yml") + load("roles/converge/tasks/apply.yml")


def step(module):
    """The one task of the converge that calls module."""
    (call,) = [t for t in converge_tasks() if module in t]
    return call


def converge_import(play):
    return [t for t in play.get("tasks", []) if (t.get("ansible.builtin.import_role") or {}).get("name")
            == "gpuci.runners.converge"]


@pytest.mark.parametrize("playbook, roles", [("site.yml", CLUSTER_ROLES)] + [(role + ".yml", [role]) for role in CLUSTER_ROLES])
def test_every_converging_playbook_plans_its_roles_then_runs_the_converge_once(playbook, roles):
    (play,) = [play for play in load("playbooks/" + playbook) if "roles" in play]
    assert [entry["role"] for entry in play["roles"]] == ["gpuci.runners.%s" % role for role in roles]
    assert len(converge_import(play)) == 1


@pytest.mark.parametrize("role", CLUSTER_ROLES)
def test_a_role_keeps_no_copy_of_the_converge_steps(role):
    tasks = REPO / "roles" / role / "tasks"
    for gone in ("alone.yml", "read.yml", "decide.yml", "releases.yml", "verify.yml"):
        assert not (tasks / gone).exists(), "roles/%s/tasks/%s" % (role, gone)
    main = load("roles/%s/tasks/main.yml" % role)
    assert [t.get("ansible.builtin.import_tasks") for t in main if "ansible.builtin.import_tasks" in t] == ["preflight.yml"]
    # Included after the end of a present run: a present run does not even parse the removal's tasks.
    (absent,) = [t for t in main if "ansible.builtin.include_tasks" in t]
    assert absent["ansible.builtin.include_tasks"]["file"] == "absent.yml"
    assert absent["ansible.builtin.include_tasks"]["apply"]["tags"] == absent["tags"] == [role, role + "_absent"]
    (end,) = [t for t in main if t.get("ansible.builtin.meta") == "end_role"]
    assert end["when"] == "%s_state == 'present'" % role
    assert main.index(absent) > main.index(end)
    text = "".join(path.read_text() for path in tasks.glob("*.yml"))
    assert "gpuci.runners.helm_releases" not in (tasks / "finish.yml").read_text()
    assert "fleet_readback" not in text and "gpuci_fleet_apply" not in text


def test_one_read_one_decision_one_apply_one_read_back_one_check():
    tasks = converge_tasks()
    modules = [next(key for key in t if "." in key) for t in tasks]
    assert modules.count("gpuci.runners.k8s_reads") == 2  # the read and the read-back
    assert modules.count("gpuci.runners.fleet_decide") == 1
    assert modules.count("kubernetes.core.k8s") == 1
    assert modules.count("gpuci.runners.helm_releases") == 1
    read, readback = [t for t in tasks if "gpuci.runners.k8s_reads" in t]
    assert read["gpuci.runners.k8s_reads"]["reads"] == "{{ _converge_steps.reads }}"
    assert readback["gpuci.runners.k8s_reads"]["reads"] == "{{ __converge_changes.readback }}"
    assert step("gpuci.runners.helm_releases")["gpuci.runners.helm_releases"]["releases"] == \
        "{{ __converge_changes.releases }}"
    decide = step("gpuci.runners.fleet_decide")
    assert decide["register"] == "__converge_changes"
    assert decide["gpuci.runners.fleet_decide"]["steps"] == "{{ _converge_steps.roles }}"
    assert sorted(decide["gpuci.runners.fleet_decide"]["roles"]) == sorted(CLUSTER_ROLES)
    check = step("ansible.builtin.assert")
    assert "gpuci.runners.fleet_readback" in check["vars"]["_converge_verified"]


def test_the_converge_steps_are_tagged_always_and_the_roles_tags_choose_in_python():
    """The steps serve every role at once; fleet_steps picks the roles and steps by their tags."""
    assert all(t.get("tags") == ["always"] for t in converge_tasks())
    converge_vars = load("roles/converge/vars/main.yml")
    assert sorted(converge_vars["_converge_tags"]) == sorted(CLUSTER_ROLES)
    assert "gpuci.runners.fleet_steps" in converge_vars["_converge_steps"]
    assert not (REPO / "playbooks" / "tasks").exists() or not list((REPO / "playbooks" / "tasks").glob("*.yml"))


@pytest.mark.parametrize("role", CLUSTER_ROLES)
def test_each_role_finishes_in_its_own_tagged_tasks(role):
    """finish.yml is included by the converge without tags of its own: every task in it carries the role's."""
    for task in load("roles/%s/tasks/finish.yml" % role):
        assert role in task["tags"], (role, task["name"])


def test_the_converge_names_only_the_roles_registered_results_so_private_role_vars_can_hide_their_vars():
    """The converge's own tasks see no cluster role's var when private_role_vars is set."""
    text = yaml.safe_dump(converge_tasks()) + (CONVERGE / "vars" / "main.yml").read_text()
    role_vars = re.findall(r"(?<![_\w])_(?:%s)_\w+" % "|".join(CLUSTER_ROLES), text)
    # The created runners' Secrets are the gitlab_runner role's fact, set by its own create step.
    assert set(role_vars) <= {"_gitlab_runner_created_secrets"}


def test_gitlab_restarts_managers_from_the_converges_apply():
    assert step("kubernetes.core.k8s")["register"] == "__converge_applied"
    restart = load("roles/gitlab_runner/tasks/finish.yml")[0]
    assert "__converge_applied" in restart["loop"]
