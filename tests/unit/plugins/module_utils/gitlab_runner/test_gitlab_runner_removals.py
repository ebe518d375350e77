# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which GitLab runner pools the role removes, and which namespaces stay, from the plan and the found accounts."""

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.removals import gitlab_runner_removals


def pool(name, state="present", namespace="gitlab-runner"):
    return {"name": name, "state": state, "namespace": namespace}


def found(name, namespace="gitlab-runner", job_namespace="gitlab-runner"):
    """A manager ServiceAccount's metadata as k8s_info returns it."""
    return {"name": "gitlab-runner-" + name, "namespace": namespace, "uid": "u-" + name,
            "annotations": {"gpuci.runners/job-namespace": job_namespace}}


def removals(pools, accounts, state="present", prune=True):
    return gitlab_runner_removals({"pools": pools, "found": accounts, "state": state, "prune": prune,
                                   "namespace": "gitlab-runner", "timeout": 120})


def test_prune_removes_undeclared_and_absent_pools_where_they_were_found():
    result = removals([pool("keep"), pool("old", "absent")],
                      [found("keep"), found("old"), found("forgotten", "elsewhere", "forgotten-jobs")])
    assert result["names"] == ["old", "forgotten"]
    assert result["existing"] == ["old", "forgotten"]
    assert result["releases"] == [
        {"name": "gitlab-runner-old", "namespace": "gitlab-runner", "state": "absent", "timeout": 120,
         "wait": False, "cascade": "foreground"},
        {"name": "gitlab-runner-forgotten", "namespace": "elsewhere", "state": "absent", "timeout": 120,
         "wait": False, "cascade": "foreground"}]
    assert result["kept_namespaces"] == ["gitlab-runner"]


def test_the_removed_pools_objects_are_selected_by_the_fleets_labels_and_their_pool():
    fleet = {"app.kubernetes.io/part-of": "gpuci-runners", "gpuci.runners/fleet": "ci"}
    result = gitlab_runner_removals({"pools": [pool("keep"), pool("old", "absent")], "found": [found("gone")],
                                     "state": "present", "prune": True, "namespace": "gitlab-runner", "timeout": 120,
                                     "labels": fleet})
    assert result["label_selectors"] == ["app.kubernetes.io/part-of=gpuci-runners", "gpuci.runners/fleet=ci",
                                         "gpuci.runners/pool in (gone,old)"]
    assert removals([pool("keep")], [found("keep")])["label_selectors"] == []  # nothing to remove, nothing selected


def test_without_prune_undeclared_pools_survive_with_their_namespaces():
    result = removals([pool("keep", namespace="jobs")], [found("keep", job_namespace="jobs"),
                                                         found("forgotten", "other", "other-jobs")], prune=False)
    assert result["names"] == [] and result["releases"] == []
    assert result["kept_namespaces"] == ["gitlab-runner", "jobs", "other", "other-jobs"]


def test_absent_pool_never_installed_is_uninstalled_in_the_role_namespace():
    result = removals([pool("never", "absent")], [])
    assert result["names"] == ["never"] and result["existing"] == []  # nothing left for a rerun to remove
    assert result["releases"] == [{"name": "gitlab-runner-never", "namespace": "gitlab-runner", "state": "absent",
                                   "timeout": 120, "wait": False, "cascade": "foreground"}]


@pytest.mark.parametrize("prune", [True, False])
def test_state_absent_removes_every_found_and_declared_pool_and_keeps_no_namespace(prune):
    result = removals([pool("declared")], [found("declared"), found("forgotten")], state="absent", prune=prune)
    assert sorted(result["names"]) == ["declared", "forgotten"]
    assert result["kept_namespaces"] == []


def test_accounts_not_named_like_a_release_are_ignored():
    result = removals([], [{"name": "someone-else", "namespace": "gitlab-runner"}])
    assert result["names"] == []


FLEET = {"app.kubernetes.io/part-of": "gpuci-runners", "gpuci.runners/fleet": "prod"}


def namespace(name, **labels):
    return {"name": name, "labels": labels}


def test_unused_namespaces_are_the_fleets_own_that_no_kept_pool_uses():
    cluster = [namespace("gitlab-runner", **FLEET), namespace("old-jobs", **FLEET),
               namespace("theirs"),  # not made by the role: never deleted
               namespace("other-fleet", **{**FLEET, "gpuci.runners/fleet": "staging"}),
               namespace("partly", **{"gpuci.runners/fleet": "prod"})]  # lacks part-of: not ours
    result = gitlab_runner_removals({"pools": [pool("keep")], "found": [found("keep"), found("old", job_namespace="old-jobs")],
                                     "state": "present", "prune": True, "namespace": "gitlab-runner", "timeout": 120,
                                     "namespaces": cluster, "labels": FLEET})
    assert result["unused_namespaces"] == ["old-jobs"]


def test_state_absent_leaves_none_of_the_fleets_namespaces():
    cluster = [namespace("gitlab-runner", **FLEET), namespace("jobs", **FLEET), namespace("default")]
    result = gitlab_runner_removals({"pools": [pool("a")], "found": [], "state": "absent", "prune": False,
                                     "namespace": "gitlab-runner", "timeout": 120, "namespaces": cluster,
                                     "labels": FLEET})
    assert result["unused_namespaces"] == ["gitlab-runner", "jobs"]


def test_without_fleet_labels_no_namespace_is_taken_for_ours():
    result = removals([], [])
    assert result["unused_namespaces"] == []
    result = gitlab_runner_removals({"pools": [], "found": [], "state": "absent", "prune": True, "namespace": "x",
                                     "timeout": 1, "namespaces": [namespace("x", a="b")], "labels": {}})
    assert result["unused_namespaces"] == []


class LazyMapping(dict):
    """Ansible 2.19 hands filters its own mappings, whose items() is a generator."""

    def items(self):
        return (item for item in super().items())


def test_labels_in_ansibles_own_mappings_are_compared_by_value():
    cluster = [{"name": "jobs", "labels": LazyMapping(FLEET)}]
    result = gitlab_runner_removals({"pools": [], "found": [], "state": "absent", "prune": True, "namespace": "x",
                                     "timeout": 1, "namespaces": cluster, "labels": LazyMapping(FLEET)})
    assert result["unused_namespaces"] == ["jobs"]


def test_the_removed_pools_objects_are_read_wherever_they_are_and_unused_namespaces_selected_by_name():
    from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.removals import POOL_OBJECT_KINDS
    fleet = {"gpuci.runners/fleet": "ci"}
    owned = {"name": "old-jobs", "labels": fleet}
    result = gitlab_runner_removals({"pools": [pool("old", "absent", "old-jobs")], "found": [found("old")],
                                     "state": "present", "prune": True, "namespace": "gitlab-runner", "timeout": 9,
                                     "labels": fleet, "namespaces": [owned]})
    assert [read["kind"] for read in result["object_reads"]] == [kind for _key, _version, kind in POOL_OBJECT_KINDS]
    assert all(read["label_selectors"] == result["label_selectors"] and "group" not in read
               and read["hidden_fields"] == ["data", "stringData"] for read in result["object_reads"])
    assert result["unused_namespace_objects"] == [{"apiVersion": "v1", "kind": "Namespace",
                                                   "metadata": {"name": "old-jobs"}}]
    assert result["unused_namespace_selectors"] == ["gpuci.runners/fleet=ci", "kubernetes.io/metadata.name in (old-jobs)"]
    nothing = removals([pool("keep")], [found("keep")])
    assert nothing["object_reads"] == [] and nothing["unused_namespace_selectors"] == []


def test_removed_objects_name_the_runners_the_role_created_in_gitlab():
    from ansible_collections.gpuci.runners.plugins.filter.gitlab_runner_removed_objects import FilterModule
    created = {"kind": "Secret", "metadata": {"name": "gitlab-runner-old-token", "namespace": "gitlab-runner",
                                              "labels": {"gpuci.runners/pool": "old"},
                                              "annotations": {"gpuci.runners/created-in-gitlab": "https://gl/"}}}
    given = {"kind": "Secret", "metadata": {"name": "gitlab-runner-given-token", "namespace": "gitlab-runner",
                                            "labels": {"gpuci.runners/pool": "given"}}}
    role = {"kind": "Role", "metadata": {"name": "gitlab-runner-old", "namespace": "jobs"}}
    result = FilterModule().filters()["gitlab_runner_removed_objects"](
        {"reads": {"secrets": {"resources": [created, given]}, "roles": {"resources": [role]}}})
    assert result["objects"] == [created, given, role]
    assert result["created_runners"] == [{"pool": "old", "api_url": "https://gl/"}]
    assert result["created_pools"] == "old"
    assert FilterModule().filters()["gitlab_runner_removed_objects"]({"reads": {}}) == {
        "objects": [], "created_runners": [], "created_pools": ""}
