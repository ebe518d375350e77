# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""site.yml and the cluster roles agree on how reads, objects and releases are handed over.

Alone, each cluster role reads the cluster (read.yml), decides (decide.yml)
and applies the objects and releases it noted in
`__<role>_objects` and `__<role>_releases` (releases.yml), then runs
finish.yml. In site.yml (`gpuci_fleet_apply`) the roles skip both; one
kubernetes.core.k8s task applies every role's noted objects, one
helm_releases task every role's noted releases, then site.yml imports each
role's finish.yml. A role whose fact or file the playbook does not name
would have its changes silently left out of a converge. In site.yml a
present role notes its reads in `__<role>_reads` instead of reading; one
k8s_reads task reads for all, each role's answers under its own group, then
site.yml imports each role's decide.yml.
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


def step(tasks, module, register=None):
    """The one task of the play that calls module (and registers register, when given); the last when several."""
    calls = [t for t in tasks if module in t and (register is None or t.get("register") == register)]
    return calls[-1]


@pytest.mark.parametrize("role", CLUSTER_ROLES)
def test_in_site_a_present_role_notes_its_reads_and_decides_from_the_one_read(role):
    reads = load("roles/%s/vars/main.yml" % role)["_%s_reads" % role]
    assert reads and all(read["group"] == role for read in reads)
    note, own_read = load("roles/%s/tasks/read.yml" % role)
    assert note["ansible.builtin.set_fact"] == {"__%s_reads" % role: "{{ _%s_reads }}" % role}
    assert note["when"] == "_%s_read_by_fleet | bool" % role
    assert own_read["gpuci.runners.k8s_reads"]["reads"] == "{{ _%s_reads }}" % role
    assert own_read["when"] == "not _%s_read_by_fleet | bool" % role
    role_vars = load("roles/%s/vars/main.yml" % role)
    assert "gpuci_fleet_apply" in role_vars["_%s_read_by_fleet" % role]
    found = role_vars["_%s_answers" % role]
    assert "__gpuci_cluster if _%s_read_by_fleet" % role in found and found.endswith(".groups.%s }}" % role)
    main = load("roles/%s/tasks/main.yml" % role)
    (decide,) = [t for t in main if (t.get("ansible.builtin.include_tasks") or {}).get("file") == "decide.yml"]
    assert "not _%s_read_by_fleet | bool" % role in decide["when"]
    tasks = fleet_play()["tasks"]
    fleet_read = step(tasks, "gpuci.runners.k8s_reads", register="__gpuci_cluster")
    assert "__%s_reads | default([])" % role in fleet_read["vars"]["_gpuci_fleet_reads"]
    assert fleet_read["no_log"] is True
    (site_decide,) = [t for t in tasks if t.get("ansible.builtin.import_role") ==
                      {"name": "gpuci.runners.%s" % role, "tasks_from": "decide.yml"}]
    assert site_decide["when"] == "__%s_reads is defined" % role
    assert tasks.index(fleet_read) < tasks.index(site_decide) < tasks.index(step(tasks, "kubernetes.core.k8s"))


@pytest.mark.parametrize("role", CLUSTER_ROLES)
def test_alone_a_role_applies_its_noted_objects_and_releases_then_finishes(role):
    objects, releases = load("roles/%s/tasks/releases.yml" % role)
    assert objects["kubernetes.core.k8s"]["definition"] == "{{ __%s_objects }}" % role
    assert releases["gpuci.runners.helm_releases"]["releases"] == "{{ __%s_releases }}" % role
    main = load("roles/%s/tasks/main.yml" % role)
    for file in ("releases.yml", "finish.yml"):
        (include,) = [t for t in main if (t.get("ansible.builtin.include_tasks") or {}).get("file") == file]
        assert "not gpuci_fleet_apply | default(false)" in include["when"]


def test_site_applies_every_roles_objects_then_releases_in_one_step_each_then_finishes_each_role():
    play = fleet_play()
    assert play["vars"]["gpuci_fleet_apply"] is True
    assert [entry["role"] for entry in play["roles"]] == ["gpuci.runners.%s" % role for role in CLUSTER_ROLES]
    tasks = play["tasks"]
    object_step, release_step, readback_step = (step(tasks, name) for name in (
        "kubernetes.core.k8s", "gpuci.runners.helm_releases", "gpuci.runners.k8s_reads"))
    assert tasks.index(object_step) < tasks.index(release_step) < tasks.index(readback_step)
    finishes = tasks[tasks.index(readback_step) + 1:]
    joined = object_step["vars"]["_gpuci_fleet_objects"]
    # In the roles' order: a namespace two roles would create goes as the first asked (fleet_objects).
    assert [joined.index("__%s_objects" % role) for role in CLUSTER_ROLES] == \
        sorted(joined.index("__%s_objects" % role) for role in CLUSTER_ROLES)
    assert "gpuci.runners.fleet_objects" in joined and object_step["no_log"] is True
    assert object_step["register"] == "__gpuci_objects_applied"
    collected = release_step["vars"]["_gpuci_fleet_releases"]
    assert all("__%s_releases" % role in collected for role in CLUSTER_ROLES)
    assert release_step["gpuci.runners.helm_releases"]["releases"] == "{{ _gpuci_fleet_releases }}"
    # Included with the role's own tag only, as the roles' main.yml does: the steps inside keep their tags.
    assert [t["ansible.builtin.include_role"] for t in finishes] == [
        {"name": "gpuci.runners.%s" % role, "tasks_from": "finish.yml", "apply": {"tags": [role]}}
        for role in CLUSTER_ROLES]


def test_gitlab_restarts_managers_from_whichever_step_applied_the_token_secrets():
    (alone_objects, _releases) = load("roles/gitlab_runner/tasks/releases.yml")
    assert alone_objects["register"] == "__gpuci_objects_applied"
    restart = load("roles/gitlab_runner/tasks/finish.yml")[0]
    assert "__gpuci_objects_applied" in restart["vars"]["_gitlab_runner_applied"]


def test_site_reads_back_every_roles_reads_once_and_the_roles_do_not_read_again():
    readback_step = step(fleet_play()["tasks"], "gpuci.runners.k8s_reads")
    collected = readback_step["vars"]["_gpuci_fleet_readback"]
    # Facts the roles noted, not their role vars: those are hidden from the play with private_role_vars.
    assert all("__%s_readback_reads | default([])" % role in collected for role in CLUSTER_ROLES)
    for role in CLUSTER_ROLES:
        (note,) = [t for t in load("roles/%s/tasks/decide.yml" % role)
                   if "__%s_objects" % role in (t.get("ansible.builtin.set_fact") or {})]
        assert note["ansible.builtin.set_fact"]["__%s_readback_reads" % role] == "{{ _%s_readback_reads }}" % role
    assert readback_step["register"] == "__gpuci_readback"
    for role in CLUSTER_ROLES:
        (own_read,) = [t for t in load("roles/%s/tasks/verify.yml" % role)
                       if (t.get("gpuci.runners.k8s_reads") or {}).get("reads") == "{{ _%s_readback_reads }}" % role]
        assert "not gpuci_fleet_apply | default(false)" in own_read["when"]
        verified = load("roles/%s/vars/main.yml" % role)["_%s_verified_reads" % role]
        assert "__gpuci_readback if gpuci_fleet_apply" in verified


def test_the_read_back_keys_are_unique_across_the_roles():
    """One k8s_reads run answers them all in site.yml, keyed by each read's key."""
    keys = []
    for role in CLUSTER_ROLES:
        reads = load("roles/%s/vars/main.yml" % role)["_%s_readback_reads" % role]
        keys += re.findall(r"'key': '(\w+)'", reads)
    assert len(keys) >= 5 and len(keys) == len(set(keys))
