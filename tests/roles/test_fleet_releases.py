# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""site.yml and the cluster roles agree on how reads, objects and releases are handed over.

Alone, each cluster role checks and plans (main.yml), then alone.yml reads
the cluster (read.yml, the plan's reads), decides (decide.yml), applies what
it decided (releases.yml: the apply and apply_releases of
`__gpuci_decision.<role>.pending`), finishes and verifies. In site.yml (`gpuci_fleet_apply`)
main.yml stops after the plan; one k8s_reads task reads every role's plan's
reads, each role's decide.yml decides, tasks/fleet_converge.yml applies every
role's objects in one kubernetes.core.k8s task and every release in one
helm_releases task, then each role's finish.yml runs, and one fleet_readback
task checks every role against its plan (what each role's verify.yml checks
alone). A role
whose fact or file the playbook does not name would have its changes
silently left out of a converge. The play names only the roles' facts, so
it works with private_role_vars.
"""
import pathlib
import re

import pytest
import yaml

REPO = pathlib.Path(__file__).resolve().parents[2]
CLUSTER_ROLES = ["gpu_operator", "gitlab_runner", "arc_runners"]


def load(path):
    return yaml.safe_load((REPO / path).read_text())


def fleet_play():
    (play,) = [play for play in load("playbooks/site.yml") if "roles" in play]
    return play


def converge_tasks():
    return load("playbooks/tasks/fleet_converge.yml")


def step(tasks, module, register=None):
    """The one task that calls module (and registers register, when given)."""
    (call,) = [t for t in tasks if module in t and (register is None or t.get("register") == register)]
    return call


def fleet_verify(tasks):
    """The one task that checks every role against its plan."""
    (task,) = [t for t in tasks if "gpuci.runners.fleet_readback" in str(t.get("vars", {}).get("_gpuci_verified"))]
    return task


@pytest.mark.parametrize("role", CLUSTER_ROLES)
def test_in_site_the_plans_reads_go_out_at_once_and_each_role_decides_from_its_group(role):
    (own_read,) = load("roles/%s/tasks/read.yml" % role)
    assert own_read["gpuci.runners.k8s_reads"]["reads"] == "{{ __%s_plan.reads }}" % role
    assert own_read["when"] == "not _%s_read_by_fleet | bool" % role
    role_vars = load("roles/%s/vars/main.yml" % role)
    assert role_vars["_%s_read_by_fleet" % role] == \
        "{{ gpuci_fleet_apply | default(false) and __%s_plan.converges }}" % role
    found = role_vars["_%s_answers" % role]
    assert "__gpuci_cluster if _%s_read_by_fleet" % role in found and found.endswith(".groups.%s }}" % role)
    tasks = fleet_play()["tasks"]
    fleet_read = step(tasks, "gpuci.runners.k8s_reads", register="__gpuci_cluster")
    assert "(__{0}_plan.reads if __{0}_plan.converges else [])".format(role) in fleet_read["vars"]["_gpuci_fleet_reads"]
    assert fleet_read["no_log"] is True
    # One step decides for every role from its group of the read (module_utils/fleet/decide.py), the step
    # each role's decide.yml takes alone, there from its own read.
    decide = step(tasks, "gpuci.runners.fleet_decide")["gpuci.runners.fleet_decide"]
    assert decide["fleet"] is True and decide["read"] == "{{ __gpuci_cluster.groups | default({}) }}"
    assert decide["roles"][role]["plan"] == "{{ __%s_plan }}" % role
    assert (decide["run_tags"], decide["skip_tags"]) == ("{{ ansible_run_tags }}", "{{ ansible_skip_tags }}")
    (alone,) = load("roles/%s/tasks/decide.yml" % role)
    assert alone["gpuci.runners.fleet_decide"]["roles"][role]["plan"] == decide["roles"][role]["plan"]
    assert alone["gpuci.runners.fleet_decide"]["read"] == "{{ __%s_cluster.groups }}" % role
    assert "fleet" not in alone["gpuci.runners.fleet_decide"]
    converge = step(tasks, "ansible.builtin.include_tasks")
    assert converge["ansible.builtin.include_tasks"] == "tasks/fleet_converge.yml"
    assert converge["when"] == "_gpuci_fleet_pending | bool"
    assert fleet_play()["vars"]["_gpuci_fleet_pending"] == "{{ __gpuci_decision.pending | default(false) }}"
    assert fleet_play()["vars"]["_gpuci_%s_decided" % role] == "{{ '%s' in _gpuci_decided }}" % role
    verify = fleet_verify(tasks)
    checked = verify["vars"]["_gpuci_verified"]
    assert "[['{0}', {{'plan': __{0}_plan, 'pending': __gpuci_decision.{0}.pending}}]]\n".format(role) in checked
    assert "if _gpuci_%s_decided | bool else []" % role in checked
    assert "not ansible_check_mode" in verify["when"] and "_gpuci_decided | length > 0" in verify["when"]
    assert role + "_verify" in verify["tags"]
    decide_step = step(tasks, "gpuci.runners.fleet_decide")
    assert tasks.index(fleet_read) < tasks.index(decide_step) < tasks.index(converge) < tasks.index(verify)


@pytest.mark.parametrize("role", CLUSTER_ROLES)
def test_alone_a_role_reads_decides_applies_its_decision_then_finishes_and_verifies(role):
    objects, releases = load("roles/%s/tasks/releases.yml" % role)
    assert objects["kubernetes.core.k8s"]["definition"] == "{{ __gpuci_decision.%s.pending.apply }}" % role
    assert releases["gpuci.runners.helm_releases"]["releases"] == "{{ __gpuci_decision.%s.pending.apply_releases }}" % role
    main = load("roles/%s/tasks/main.yml" % role)
    # In the fleet a present role ends before its include, in Ansible's own process (no worker for a skip)...
    (end,) = [t for t in main if t.get("ansible.builtin.meta") == "end_role"]
    assert "%s_state == 'present' and" % role in end["when"] and "gpuci_fleet_apply | default(false)" in end["when"]
    assert "always" in end["tags"]
    # ...otherwise one include for both states: alone.yml when present, absent.yml when absent.
    (alone,) = [t for t in main if "alone.yml" in str(t.get("ansible.builtin.include_tasks", {}).get("file"))]
    assert main.index(end) == main.index(alone) - 1 and "when" not in alone
    assert alone["ansible.builtin.include_tasks"]["file"] == (
        "{{ 'absent.yml' if %s_state == 'absent' else 'alone.yml' }}" % role)
    steps = [t.get("ansible.builtin.import_tasks") for t in load("roles/%s/tasks/alone.yml" % role)]
    files = [s for s in steps if s]
    assert files[:2] == ["read.yml", "decide.yml"] and files[-3:] == ["releases.yml", "finish.yml", "verify.yml"]


def test_site_applies_every_roles_objects_then_releases_in_one_step_each_then_finishes_each_role():
    play = fleet_play()
    assert play["vars"]["gpuci_fleet_apply"] is True
    assert [entry["role"] for entry in play["roles"]] == ["gpuci.runners.%s" % role for role in CLUSTER_ROLES]
    tasks = converge_tasks()
    object_step, release_step = step(tasks, "kubernetes.core.k8s"), step(tasks, "gpuci.runners.helm_releases")
    readback_step = step(tasks, "gpuci.runners.k8s_reads", register="__gpuci_readback")
    assert tasks.index(object_step) < tasks.index(release_step) < tasks.index(readback_step)
    joined = object_step["vars"]["_gpuci_fleet_objects"]
    # In the roles' order: a namespace two roles would create goes as the first asked (fleet_objects).
    positions = [joined.index("__gpuci_decision.%s.pending.apply" % role) for role in CLUSTER_ROLES]
    assert positions == sorted(positions)
    assert "gpuci.runners.fleet_objects" in joined and object_step["no_log"] is True
    assert object_step["register"] == "__gpuci_objects_applied"
    # The decide step joined the decided roles' releases and reads back (module_utils/fleet/decide.py).
    assert release_step["gpuci.runners.helm_releases"]["releases"] == "{{ __gpuci_decision.releases }}"
    assert readback_step["gpuci.runners.k8s_reads"]["reads"] == "{{ __gpuci_decision.readback }}"
    finishes = [t["ansible.builtin.include_role"] for t in tasks[tasks.index(readback_step) + 1:]]
    assert [(f["name"], f["tasks_from"]) for f in finishes] == [
        ("gpuci.runners.%s" % role, "finish.yml") for role in CLUSTER_ROLES]
    # Included with the role's own tags, as alone.yml imports it: the steps inside keep theirs.
    assert all(f["apply"]["tags"][0] == role for f, role in zip(finishes, CLUSTER_ROLES))


def test_the_play_names_only_the_roles_facts_so_private_role_vars_can_hide_their_vars():
    """Tasks of the play itself see no role var when private_role_vars is set; imported role tasks do."""
    play_level = [t for t in fleet_play()["tasks"] if "ansible.builtin.import_role" not in t] + converge_tasks()
    text = yaml.safe_dump(play_level) + yaml.safe_dump(fleet_play()["vars"])
    role_vars = re.findall(r"(?<![_\w])_(?:%s)_\w+" % "|".join(CLUSTER_ROLES), text)
    assert role_vars == []


def test_gitlab_restarts_managers_from_whichever_step_applied_the_token_secrets():
    (alone_objects, _releases) = load("roles/gitlab_runner/tasks/releases.yml")
    assert alone_objects["register"] == "__gpuci_objects_applied"
    restart = load("roles/gitlab_runner/tasks/finish.yml")[0]
    assert "__gpuci_objects_applied" in restart["vars"]["_gitlab_runner_applied"]


@pytest.mark.parametrize("role", CLUSTER_ROLES)
def test_verification_hands_over_the_read_and_the_read_back_fleet_readback_chooses_from(role):
    """Alone, the role's own read and read-back; in site.yml, the fleet's: fleet_readback picks per role."""
    (alone_check,) = [t for t in load("roles/%s/tasks/verify.yml" % role) if "ansible.builtin.assert" in t]
    alone = alone_check["vars"]["__%s_verified" % role]
    assert "'read': __{0}_cluster.groups, 'readback': __{0}_readback.groups | default({{}})".format(role) in alone
    assert "'roles': {{'{0}': {{'plan': __{0}_plan, 'pending': __gpuci_decision.{0}.pending}}}}".format(role) in alone
    assert alone.rstrip().endswith("| gpuci.runners.fleet_readback }}")
    fleet = fleet_verify(fleet_play()["tasks"])["vars"]["_gpuci_verified"]
    assert "'read': __gpuci_cluster.groups, 'readback': __gpuci_readback.groups | default({})" in fleet
    (own_read,) = [t for t in load("roles/%s/tasks/alone.yml" % role) if "gpuci.runners.k8s_reads" in t]
    assert own_read["gpuci.runners.k8s_reads"]["reads"] == "{{ __gpuci_decision.%s.pending.readback }}" % role
    assert own_read["register"] == "__%s_readback" % role
