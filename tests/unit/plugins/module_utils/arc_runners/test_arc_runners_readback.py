# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""arc_runners_readback: the plan's scale sets against the AutoscalingRunnerSets on the cluster."""
import copy

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.plan import arc_runners_plan
from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.readback import arc_runners_readback, named_secret_key
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

from test_arc_runners_plan import URL, settings

CLASSES = {"l40s": {"node_selector": {"gpu": "l40s"}, "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}]}}
PLAN = arc_runners_plan(settings({"name": "l40s", "github_config_url": URL, "github_token": "ghp_X", "gpu_class": "l40s",
                                  "gpus": 1},
                                 {"name": "cpu", "github_config_url": URL, "github_config_secret": "org-app"},
                                 runtime_class="nvidia"), CLASSES)
BY_SCALE_SET = PLAN["by_scale_set"]


def runner_set(name, planned=None):
    """The AutoscalingRunnerSet the chart makes from the planned values, with the server's own fields."""
    planned = planned or BY_SCALE_SET[name]
    return {"apiVersion": "actions.github.com/v1alpha1", "kind": "AutoscalingRunnerSet",
            "metadata": {"name": name, "namespace": planned["namespace"], "uid": "1"},
            "spec": {"githubConfigUrl": URL, "githubConfigSecret": planned["secret"],
                     "template": copy.deepcopy(planned["template"])}}


# The Secret the cpu scale set names (github_config_secret), as the role's read finds it.
NAMED_SECRETS = {named_secret_key("cpu"): {"api_found": True, "resources": [{"metadata": {"name": "org-app"}}]}}


def readback(runner_sets):
    return arc_runners_readback({"by_scale_set": BY_SCALE_SET, "runner_sets": runner_sets, "answers": NAMED_SECRETS})


def test_runner_sets_that_carry_the_plan_are_verified():
    assert readback([runner_set("l40s"), runner_set("cpu")]) == []


def test_the_plan_places_the_gpu_scale_set_so_the_check_has_something_to_compare():
    pod = BY_SCALE_SET["l40s"]["template"]["spec"]
    assert pod["nodeSelector"] == {"gpu": "l40s"} and pod["tolerations"] and pod["runtimeClassName"] == "nvidia"
    assert BY_SCALE_SET["cpu"]["secret"] == "org-app"


def test_a_missing_or_doubled_runner_set_is_named():
    assert readback([runner_set("l40s")]) == ["expected one AutoscalingRunnerSet arc-runners/cpu; found 0"]
    assert readback([runner_set("l40s"), runner_set("l40s"), runner_set("cpu")]) == [
        "expected one AutoscalingRunnerSet arc-runners/l40s; found 2"]


def test_a_runner_set_in_another_namespace_does_not_count():
    moved = runner_set("cpu")
    moved["metadata"]["namespace"] = "elsewhere"
    assert readback([runner_set("l40s"), moved]) == ["expected one AutoscalingRunnerSet arc-runners/cpu; found 0"]


@pytest.mark.parametrize("field, value, named", [
    ("nodeSelector", {"gpu": "a10"}, "nodeSelector"),
    ("tolerations", [], "tolerations"),
    ("runtimeClassName", "runc", "runtimeClassName"),
])
def test_a_drifted_pod_template_names_the_fields(field, value, named):
    drifted = runner_set("l40s")
    drifted["spec"]["template"]["spec"][field] = value
    assert readback([drifted, runner_set("cpu")]) == [
        "AutoscalingRunnerSet arc-runners/l40s does not carry the pod template the role rendered: %s differ" % named]


def test_omitted_fields_equal_their_empty_values_as_the_api_server_omits_them():
    trimmed = runner_set("cpu")
    for field in ("nodeSelector", "tolerations", "runtimeClassName"):
        trimmed["spec"]["template"]["spec"].pop(field, None)
    assert readback([runner_set("l40s"), trimmed]) == []


def test_changed_runner_resources_and_another_secret_are_named():
    drifted = runner_set("l40s")
    runner = next(c for c in drifted["spec"]["template"]["spec"]["containers"] if c["name"] == "runner")
    runner["resources"] = {"limits": {"nvidia.com/gpu": 2}}
    drifted["spec"]["githubConfigSecret"] = "someone-elses"
    assert readback([drifted, runner_set("cpu")]) == [
        "AutoscalingRunnerSet arc-runners/l40s names githubConfigSecret someone-elses, not l40s-github-config",
        "AutoscalingRunnerSet arc-runners/l40s does not carry the pod template the role rendered: runner resources differ"]


def test_nothing_planned_nothing_to_verify():
    assert arc_runners_readback({"by_scale_set": {}, "runner_sets": [runner_set("l40s")]}) == []


def test_bad_input_fails_naming_the_field():
    with pytest.raises(ValidationError, match=r"^readback\.runner_sets"):
        arc_runners_readback({"by_scale_set": BY_SCALE_SET, "runner_sets": "none"})


def test_a_secret_a_scale_set_names_must_exist():
    runner_sets = [runner_set("l40s"), runner_set("cpu")]
    missing = arc_runners_readback({"by_scale_set": BY_SCALE_SET, "runner_sets": runner_sets,
                                    "answers": {named_secret_key("cpu"): {"api_found": True, "resources": []}}})
    assert missing == ["The Secret %s/org-app that scale set cpu names in github_config_secret does not exist; "
                       "its listener cannot register with GitHub until it does." % BY_SCALE_SET["cpu"]["namespace"]]
    assert readback(runner_sets) == []


def test_the_plan_reads_each_named_secret_without_its_data_and_only_those():
    named = [r for r in PLAN["reads"] if r["key"].startswith("named_secret/")]
    assert named == [{"group": "arc_runners", "key": named_secret_key("cpu"), "kind": "Secret", "api_version": "v1",
                      "name": "org-app", "namespace": BY_SCALE_SET["cpu"]["namespace"],
                      "hidden_fields": ["data", "stringData"]}]
    assert [r for r in PLAN["readback_reads"] if r["key"].startswith("named_secret/")] == named
