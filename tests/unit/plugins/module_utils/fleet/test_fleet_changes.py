# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The change list (fleet/changes.py, fleet/role_changes.py) that plan.yml and the converge show, from fleet_decide
over recorded reads of a cluster: fresh, converged, with a changed value, with a pool to remove.

A "converged" cluster is recorded from the decision itself: what its apply would create (the objects as the API
server returns them, the releases as Helm stores them, the managers Available), so no answer is typed by hand.
"""
import base64
import copy
import json

from ansible_collections.gpuci.runners.plugins.module_utils.fleet.decide import fleet_decide
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import (
    CREATED_IN_ANNOTATION,
    gitlab_runner_plan,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.plan import gpu_operator_plan

from test_gitlab_runner_plan import settings as gitlab_settings
from test_gpu_operator_plan import settings as operator_settings
from test_pending_changes import stored

TOKENS = {name: "glrt-CHANGES-%s-SECRET" % name for name in ("a", "b", "c")}
# Where each kind of the GitLab runner role's objects is read (gitlab_runner/plan.py _reads).
READ_KEYS = {"Namespace": "namespaces", "ServiceAccount": "accounts", "Role": "roles", "RoleBinding": "role_bindings",
             "Secret": "secrets"}
ALL = ["decide", "apply", "verify"]


def pools(concurrent_b=2, names=("a", "b", "c"), tokens=TOKENS):
    chosen = [{"name": "a", "concurrent": 4}, {"name": "b", "concurrent": concurrent_b}, {"name": "c"}]
    return [dict(pool, **({"token": tokens[pool["name"]]} if tokens.get(pool["name"]) else {}))
            for pool in chosen if pool["name"] in names]


def gitlab_role(pool_list, **overrides):
    return {"gitlab_runner": {"plan": gitlab_runner_plan(gitlab_settings(*pool_list, **overrides)), "pools": pool_list}}


def decide(roles, read=None, check_mode=False):
    made, refusals = fleet_decide(roles, read or {}, check_mode=check_mode)
    assert refusals == []
    return made


def live(obj):
    """An applied object as the API server answers: its own fields added, a Secret's stringData as data."""
    answer = copy.deepcopy(obj)
    answer["metadata"].update(uid="u-" + answer["metadata"]["name"], resourceVersion="7")
    if answer.get("stringData"):
        encoded = {k: base64.b64encode(v.encode()).decode() for k, v in answer.pop("stringData").items()}
        answer["data"] = dict(answer.get("data") or {}, **encoded)
    if answer["kind"] == "Namespace":
        answer["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = answer["metadata"]["name"]
    return answer


def converged(roles, extra_secrets=()):
    """The GitLab runner role's answers of the cluster a converge of ``roles`` leaves behind."""
    made = decide(roles)["gitlab_runner"]["pending"]
    reads = dict((key, []) for key in READ_KEYS.values())
    for obj in made["apply"] + list(extra_secrets):
        reads[READ_KEYS[obj["kind"]]].append(live(obj))
    reads["release_records"] = [stored(release) for release in made["apply_releases"]]
    reads["managers"] = [{"kind": "Deployment", "metadata": {"name": release["name"], "namespace": release["namespace"]},
                          "status": {"conditions": [{"type": "Available", "status": "True"}]}}
                         for release in made["apply_releases"]]
    return {"gitlab_runner": dict((key, {"resources": objects}) for key, objects in reads.items())}


def gitlab_changes(made):
    return made["changes"]["roles"]["gitlab_runner"]


def test_a_fresh_cluster_is_all_adds():
    made = decide(gitlab_role(pools()))
    part = gitlab_changes(made)
    assert part["change"] == [] and part["remove"] == [] and part["notes"] == []
    added = [item["what"] for item in part["add"]]
    assert "Namespace gitlab-runner" in added
    assert "release gitlab-runner/gitlab-runner-a (chart gitlab-runner 0.86.0)" in added
    assert "Secret gitlab-runner/gitlab-runner-c-token (data not shown)" in added
    assert [kind for kind in ("ServiceAccount", "Role", "RoleBinding")
            if sum(what.startswith(kind + " ") for what in added) != 3] == []
    assert made["changes"]["lines"][0] == "GitLab runner pools: %d to add" % len(added)
    assert made["changes"]["none"] is False


def test_a_converged_cluster_has_no_changes():
    roles = gitlab_role(pools())
    made = decide(roles, converged(roles))
    assert made["changes"]["lines"] == ["GitLab runner pools: no changes"] and made["changes"]["none"] is True
    assert made["gitlab_runner"]["pending"]["settled"] is True


def test_a_changed_value_is_a_change_of_its_release_with_the_values_diff():
    before = gitlab_role(pools())
    made = decide(gitlab_role(pools(concurrent_b=3)), converged(before))
    part = gitlab_changes(made)
    assert part["add"] == [] and part["remove"] == []
    assert part["change"] == [{"what": "release gitlab-runner/gitlab-runner-b", "diff": ["concurrent: 2 -> 3"]}]
    assert made["changes"]["lines"] == ["GitLab runner pools: 1 to change", "  change release gitlab-runner/gitlab-runner-b",
                                        "      concurrent: 2 -> 3"]


def test_a_chart_upgrade_is_named_in_the_diff():
    before = gitlab_role(pools())
    later = gitlab_role(pools(), gitlab_runner_chart_version="0.87.0")
    part = gitlab_changes(decide(later, converged(before)))
    assert [item["diff"] for item in part["change"]] == [["chart: gitlab-runner-0.86.0 -> gitlab-runner-0.87.0"]] * 3


def test_a_pool_dropped_from_the_inventory_is_a_removal_by_name_with_its_objects():
    before = gitlab_role(pools())
    made = decide(gitlab_role(pools(names=("a", "b"))), converged(before))
    part = gitlab_changes(made)
    assert part["add"] == [] and part["change"] == []
    assert [item["what"] for item in part["remove"]] == [
        "pool c (release gitlab-runner/gitlab-runner-c)", "ServiceAccount gitlab-runner/gitlab-runner-c",
        "Role gitlab-runner/gitlab-runner-c", "RoleBinding gitlab-runner/gitlab-runner-c",
        "Secret gitlab-runner/gitlab-runner-c-token (data not shown)"]
    assert made["changes"]["lines"][:2] == ["GitLab runner pools: 5 to remove",
                                            "  remove pool c (release gitlab-runner/gitlab-runner-c)"]


def test_a_changed_token_is_a_change_of_its_secret_that_shows_no_token():
    before = gitlab_role(pools())
    rotated = dict(TOKENS, a="glrt-CHANGES-rotated-SECRET")
    made = decide(gitlab_role(pools(tokens=rotated)), converged(before))
    assert gitlab_changes(made)["change"] == [{"what": "Secret gitlab-runner/gitlab-runner-a-token (data not shown)",
                                              "diff": ["data.runner-token: (hidden) -> (hidden) (changed)"]}]
    shown = json.dumps(made["changes"])
    for token in list(TOKENS.values()) + [rotated["a"]]:
        assert token not in shown and base64.b64encode(token.encode()).decode() not in shown


def test_check_mode_lists_the_same_as_a_plan():
    """site --check --diff decides in check mode, plan.yml does not: the list is the same."""
    roles = gitlab_role(pools(names=("a",)))
    for read in ({}, converged(gitlab_role(pools()))):
        assert decide(roles, read, check_mode=True)["changes"] == decide(roles, read)["changes"]


def test_runners_the_role_makes_in_gitlab_are_listed_until_their_token_secret_exists_and_removed_with_their_pool():
    untokened = pools(tokens={})
    roles = gitlab_role(untokened)
    part = gitlab_changes(decide(roles))
    assert "runner of pool a in GitLab https://gitlab.example.com/, its token into Secret " \
           "gitlab-runner/gitlab-runner-a-token (data not shown)" in [item["what"] for item in part["add"]]
    # What create_runners.yml leaves: the token Secret, annotated with the GitLab it was created in.
    created = [{"apiVersion": "v1", "kind": "Secret", "metadata": {
        "name": secret["name"], "namespace": secret["namespace"], "labels": secret["labels"],
        "annotations": {CREATED_IN_ANNOTATION: "https://gitlab.example.com/api/v4"}},
        "stringData": {"runner-token": "glrt-CHANGES-created-SECRET"}} for secret in roles["gitlab_runner"]["plan"]["secrets"]]
    cluster = converged(roles, created)
    assert gitlab_changes(decide(roles, cluster))["add"] == []
    dropped = gitlab_changes(decide(gitlab_role(pools(names=("a", "b"), tokens={})), cluster))
    assert "runner of pool c in GitLab https://gitlab.example.com/api/v4" in [item["what"] for item in dropped["remove"]]
    assert "glrt-CHANGES-created-SECRET" not in json.dumps(dropped)


def test_a_deployment_that_is_not_available_is_a_note_not_a_change():
    roles = gitlab_role(pools(names=("a",)))
    cluster = converged(roles)
    cluster["gitlab_runner"]["managers"]["resources"][0]["status"]["conditions"][0]["status"] = "False"
    made = decide(roles, cluster)
    assert made["changes"]["lines"] == [
        "GitLab runner pools: no changes",
        "  note: Deployment gitlab-runner/gitlab-runner-a is not Available: a converge waits for it"]


def test_the_gpu_operators_node_labels_are_changes_with_their_labels_before_and_after():
    plan = gpu_operator_plan(operator_settings(gpu_operator_time_slicing={"l40s": 2}))
    node = {"kind": "Node", "metadata": {"name": "gpu-l40s-0", "labels": {"nvidia.com/gpu.product": "NVIDIA-L40S"}}}
    made = decide({"gpu_operator": {"plan": plan}}, {"gpu_operator": {"nodes": {"resources": [node]}}})
    (labelled,) = [item for item in made["changes"]["roles"]["gpu_operator"]["change"] if item["what"] == "Node gpu-l40s-0"]
    assert labelled["diff"] and all(line.startswith("metadata.labels.") and "(unset) ->" in line for line in labelled["diff"])
