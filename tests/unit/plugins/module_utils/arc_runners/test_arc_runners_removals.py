# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the arc_runners role prunes and removes (module_utils/arc_runners/removals.py)."""
import pytest

from ansible_collections.gpuci.runners.plugins.filter.arc_runners_absent import FilterModule as AbsentFilter
from ansible_collections.gpuci.runners.plugins.filter.arc_runners_leftovers import FilterModule as LeftoversFilter
from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.removals import (
    FINALIZED_KINDS,
    arc_runners_absent,
    arc_runners_leftovers,
    arc_runners_removals,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

LABEL = "gpuci.runners/arc-scale-set"
PLANNED = {
    # Owns its credentials Secret and has a hook ConfigMap.
    "a10": {"namespace": "arc-runners", "secret": "a10-github-config", "owns_secret": True,
            "hook_configmap": "a10-hook"},
    # Names an existing Secret, no hook (container mode none).
    "dri": {"namespace": "arc-dri", "secret": "shared-github", "owns_secret": False, "hook_configmap": None},
}


def obj(kind, name, namespace, scale_set=None, data=None):
    labels = {LABEL: scale_set} if scale_set else {}
    found = {"kind": kind, "metadata": {"name": name, "namespace": namespace, "labels": labels}}
    if data:
        found["data"] = data
    return found


def removals(secrets=(), configmaps=()):
    return arc_runners_removals({"by_scale_set": PLANNED, "scale_set_label": LABEL, "secrets": list(secrets),
                                 "configmaps": list(configmaps)})


def names(objects):
    return [(o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]) for o in objects]


def test_objects_in_use_stay():
    result = removals([obj("Secret", "a10-github-config", "arc-runners", "a10")],
                      [obj("ConfigMap", "a10-hook", "arc-runners", "a10")])
    assert result == {"secrets": [], "configmaps": []}


def test_a_secret_replaced_by_github_config_secret_goes():
    result = removals([obj("Secret", "dri-github-config", "arc-dri", "dri", data={"github_token": "c2VjcmV0"})])
    assert names(result["secrets"]) == [("Secret", "arc-dri", "dri-github-config")]
    # Only what the delete needs, never the Secret's data.
    assert result["secrets"][0] == {"apiVersion": "v1", "kind": "Secret",
                                    "metadata": {"name": "dri-github-config", "namespace": "arc-dri"}}


def test_kubernetes_mode_left_and_a_namespace_changed():
    result = removals([obj("Secret", "a10-github-config", "old-namespace", "a10")],
                      [obj("ConfigMap", "dri-hook", "arc-dri", "dri"), obj("ConfigMap", "a10-hook", "old", "a10")])
    assert names(result["secrets"]) == [("Secret", "old-namespace", "a10-github-config")]
    assert names(result["configmaps"]) == [("ConfigMap", "arc-dri", "dri-hook"), ("ConfigMap", "old", "a10-hook")]


def test_objects_of_scale_sets_that_are_not_present_are_left_to_their_removal():
    result = removals([obj("Secret", "gone-github-config", "arc-runners", "gone"),
                       obj("Secret", "unlabelled", "arc-runners")],
                      [obj("ConfigMap", "gone-hook", "arc-runners", "gone")])
    assert result == {"secrets": [], "configmaps": []}


def test_a_bad_answer_is_named():
    with pytest.raises(ValidationError, match=r"arc_runners_removals\.secrets"):
        removals(["not an object"])


def test_absent_selects_the_used_namespaces_the_role_created_and_names_the_runner_sets_left():
    plan = {"scale_sets": [{"namespace": "arc-runners"}, {"namespace": "arc-dri"}, {"namespace": "arc-runners"}],
            "namespace_selectors": ["app.kubernetes.io/managed-by=gpuci.runners"]}
    left = [obj("AutoscalingRunnerSet", "other", "elsewhere")]
    result = AbsentFilter().filters()["arc_runners_absent"](
        {"plan": plan, "controller_namespace": "arc-systems", "runner_sets": left})
    assert result == {"namespace_selectors": ["app.kubernetes.io/managed-by=gpuci.runners",
                                              "kubernetes.io/metadata.name in (arc-systems,arc-runners,arc-dri)"],
                      "runner_sets": "elsewhere/other"}
    assert arc_runners_absent({"plan": plan, "controller_namespace": "arc-systems"})["runner_sets"] == ""


def test_leftovers_are_read_by_kind_and_scale_set_name_and_found_in_one_list():
    spec = {"scale_set_name_label": "actions.github.com/scale-set-name", "scale_sets": [{"name": "a"}, {"name": "b"}]}
    reads = LeftoversFilter().filters()["arc_runners_leftovers"](spec)["reads"]
    assert [read["kind"] for read in reads] == [kind for _key, _version, kind in FINALIZED_KINDS]
    assert all(read["label_selectors"] == ["actions.github.com/scale-set-name in (a,b)"] for read in reads)
    answers = {"roles": {"resources": [obj("Role", "r", "ns")]}, "service_accounts": {"resources": []}}
    assert names(arc_runners_leftovers(dict(spec, reads=answers))["objects"]) == [("Role", "ns", "r")]
    assert arc_runners_leftovers(dict(spec, scale_sets=[]))["reads"] == []
