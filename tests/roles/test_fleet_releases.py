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
    object_step, release_step, *finishes = play["tasks"]
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
