# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""site.yml and the cluster roles agree on how objects and releases are handed over.

Alone, each cluster role applies the objects and releases it noted in
`__<role>_objects` and `__<role>_releases` (releases.yml), then runs
finish.yml. In site.yml (`gpuci_fleet_apply`) the roles skip both; one
kubernetes.core.k8s task applies every role's noted objects, one
helm_releases task every role's noted releases, then site.yml imports each
role's finish.yml. A role whose fact or file the playbook does not name
would have its changes silently left out of a converge.
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
    object_step, release_step, readback_step, *finishes = play["tasks"]
    joined = object_step["vars"]["_gpuci_fleet_objects"]
    # In the roles' order: a namespace two roles would create goes as the first asked (fleet_objects).
    assert [joined.index("__%s_objects" % role) for role in CLUSTER_ROLES] == \
        sorted(joined.index("__%s_objects" % role) for role in CLUSTER_ROLES)
    assert "gpuci.runners.fleet_objects" in joined and object_step["no_log"] is True
    assert object_step["register"] == "__gpuci_objects_applied"
    collected = release_step["vars"]["_gpuci_fleet_releases"]
    assert all("__%s_releases" % role in collected for role in CLUSTER_ROLES)
    assert release_step["gpuci.runners.helm_releases"]["releases"] == "{{ _gpuci_fleet_releases }}"
    assert [(t["ansible.builtin.import_role"]["name"], t["ansible.builtin.import_role"]["tasks_from"])
            for t in finishes] == [("gpuci.runners.%s" % role, "finish.yml") for role in CLUSTER_ROLES]


def test_gitlab_restarts_managers_from_whichever_step_applied_the_token_secrets():
    (alone_objects, _releases) = load("roles/gitlab_runner/tasks/releases.yml")
    assert alone_objects["register"] == "__gpuci_objects_applied"
    restart = load("roles/gitlab_runner/tasks/finish.yml")[0]
    assert "__gpuci_objects_applied" in restart["vars"]["_gitlab_runner_applied"]


def test_site_reads_back_every_roles_reads_once_and_the_roles_do_not_read_again():
    readback_step = fleet_play()["tasks"][2]
    collected = readback_step["vars"]["_gpuci_fleet_readback"]
    # Facts the roles noted, not their role vars: those are hidden from the play with private_role_vars.
    assert all("__%s_readback_reads | default([])" % role in collected for role in CLUSTER_ROLES)
    for role in CLUSTER_ROLES:
        (note,) = [t for t in load("roles/%s/tasks/read.yml" % role)
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
