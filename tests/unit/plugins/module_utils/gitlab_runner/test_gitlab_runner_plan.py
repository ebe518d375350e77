# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gitlab_runner role's plan: defaults, releases with complete values, RBAC, token Secrets; and the
Secrets' tokens, filled in apart from the plan."""

import base64
import tomllib

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner import config as gitlab_runner_config_module
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import gitlab_runner_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.token_secrets import gitlab_runner_token_secrets
from ansible_collections.gpuci.runners.plugins.module_utils.common.ownership_labels import (
    OWNERSHIP_LABELS,
    label_selector,
    label_selectors,
    labels_match,
    ownership_labels,
    set_selector,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

RULES = [{"apiGroups": [""], "resources": ["pods"], "verbs": ["create"]}]
MANAGER_RESOURCES = {"requests": {"cpu": "100m"}}


def settings(*pools, **overrides):
    base = {
        "gitlab_runner_pools": list(pools),
        "gitlab_runner_namespace": "gitlab-runner",
        "gitlab_runner_fleet": "ci",
        "gitlab_runner_gitlab_url": "https://gitlab.example.com/",
        "gitlab_runner_concurrent": 2,
        "gitlab_runner_runtime_class": None,
        "gitlab_runner_manager_resources": MANAGER_RESOURCES,
        "gitlab_runner_job_rbac_rules": RULES,
        "gitlab_runner_extra_values": {},
        "gitlab_runner_chart_version": "0.86.0",
        "gitlab_runner_chart_repo_url": "https://charts.gitlab.io",
        "gitlab_runner_chart_path": "",
        "gitlab_runner_wait_timeout": 300,
        # Pools without a token have their runner created in GitLab.
        "gitlab_runner_access_token": "glpat-PLAN-SECRET",
    }
    base.update(overrides)
    return base


L40S = {"name": "l40s", "gpu_class": "l40s", "gpus": 1, "token": "glrt-PLAN-SECRET"}
CPU = {"name": "cpu", "namespace": "ci-jobs", "concurrent": 8, "gitlab_url": "https://other.example.com/"}
GONE = {"name": "gone", "state": "absent"}


def test_pools_take_the_role_defaults_and_lose_their_tokens():
    plan = gitlab_runner_plan(settings(L40S, CPU, GONE))
    l40s, cpu, gone = plan["pools"]
    assert (l40s["namespace"], l40s["gitlab_url"], l40s["concurrent"], l40s["state"]) == (
        "gitlab-runner", "https://gitlab.example.com/", 2, "present")
    assert (cpu["namespace"], cpu["gitlab_url"], cpu["concurrent"]) == ("ci-jobs", "https://other.example.com/", 8)
    assert gone["state"] == "absent"
    assert "glrt-PLAN-SECRET" not in repr(plan)


def test_the_role_concurrent_from_extra_vars_reaches_the_release_as_a_number():
    """-e gitlab_runner_concurrent=7 hands the role "7"; the chart's concurrent must be 7."""
    plan = gitlab_runner_plan(settings(L40S, gitlab_runner_concurrent="7"))
    assert plan["pools"][0]["concurrent"] == 7
    assert plan["releases"][0]["values"]["concurrent"] == 7


def test_a_bad_role_concurrent_is_named_once_not_at_each_pool():
    plan = gitlab_runner_plan(settings(L40S, CPU | {"concurrent": None}, gitlab_runner_concurrent=0))
    assert plan == {"problems": ["gitlab_runner_concurrent: must be an integer >= 1 (got 0)"]}


def test_one_complete_release_per_present_pool():
    plan = gitlab_runner_plan(settings(L40S, CPU, GONE))
    assert [r["name"] for r in plan["releases"]] == ["gitlab-runner-l40s", "gitlab-runner-cpu"]
    release = plan["releases"][0]
    assert {k: release[k] for k in ("namespace", "state", "chart", "chart_version", "chart_repo_url", "chart_path",
                                    "timeout")} == {
        "namespace": "gitlab-runner", "state": "present", "chart": "gitlab-runner", "chart_version": "0.86.0",
        "chart_repo_url": "https://charts.gitlab.io", "chart_path": None, "timeout": 300}
    values = release["values"]
    assert values["runners"]["name"] == "l40s" and values["runners"]["secret"] == "gitlab-runner-l40s-token"
    assert values["rbac"] == {"create": False}
    assert values["serviceAccount"] == {"create": False, "name": "gitlab-runner-l40s"}
    assert values["replicas"] == 1 and "hpa" not in values
    assert values["resources"] == MANAGER_RESOURCES
    assert values["podLabels"]["gpuci.runners/pool"] == "l40s"
    runner = tomllib.loads(values["runners"]["config"])["runners"][0]
    assert runner["kubernetes"]["namespace"] == "gitlab-runner"
    assert "nvidia.com/gpu" in values["runners"]["config"]


def test_runtime_class_follows_the_setting():
    values = gitlab_runner_plan(settings(L40S, gitlab_runner_runtime_class="nvidia-cdi"))["releases"][0]["values"]
    runner = tomllib.loads(values["runners"]["config"])["runners"][0]
    assert runner["kubernetes"]["runtime_class_name"] == "nvidia-cdi"


def test_hpa_replaces_the_single_replica():
    pool = dict(CPU, hpa={"max_replicas": 4}, resources={"requests": {"cpu": "200m"}})
    values = gitlab_runner_plan(settings(pool))["releases"][0]["values"]
    assert "replicas" not in values
    assert values["hpa"]["minReplicas"] == 1 and values["hpa"]["maxReplicas"] == 4
    assert values["hpa"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 80
    assert values["resources"] == {"requests": {"cpu": "200m"}}


def test_extra_values_merge_deeply_over_the_role_values():
    extra = {"runners": {"privileged": False}, "rbac": {"create": True}}
    values = gitlab_runner_plan(settings(L40S, gitlab_runner_extra_values=extra))["releases"][0]["values"]
    assert values["runners"]["privileged"] is False and values["runners"]["name"] == "l40s"
    assert values["rbac"] == {"create": True}


def test_access_is_scoped_to_the_job_namespace():
    access = gitlab_runner_plan(settings(CPU))["access"]
    account, role, binding = access
    assert (account["kind"], account["metadata"]["namespace"]) == ("ServiceAccount", "gitlab-runner")
    assert account["metadata"]["annotations"] == {"gpuci.runners/job-namespace": "ci-jobs"}
    assert (role["kind"], role["metadata"]["namespace"], role["rules"]) == ("Role", "ci-jobs", RULES)
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "gitlab-runner-cpu", "namespace": "gitlab-runner"}]
    assert all(obj["metadata"]["labels"]["gpuci.runners/fleet"] == "ci" for obj in access)


def test_labels_are_the_collection_labels_plus_component_and_fleet():
    plan = gitlab_runner_plan(settings(L40S))
    assert plan["labels"] == {**OWNERSHIP_LABELS, "app.kubernetes.io/component": "gitlab-runner",
                              "gpuci.runners/fleet": "ci"}
    assert plan["label_selectors"] == label_selectors(plan["labels"])
    assert label_selector(OWNERSHIP_LABELS) == "app.kubernetes.io/part-of=gpuci-runners,app.kubernetes.io/managed-by=gpuci.runners"


def test_selectors_and_matching_of_the_collection_labels():
    assert label_selectors(OWNERSHIP_LABELS) == ["app.kubernetes.io/part-of=gpuci-runners",
                                                 "app.kubernetes.io/managed-by=gpuci.runners"]
    assert labels_match({**OWNERSHIP_LABELS, "other": "x"}, OWNERSHIP_LABELS)
    assert not labels_match({"app.kubernetes.io/part-of": "gpuci-runners"}, OWNERSHIP_LABELS)
    assert not labels_match({**OWNERSHIP_LABELS, "app.kubernetes.io/managed-by": "helm"}, OWNERSHIP_LABELS)
    assert set_selector("gpuci.runners/pool", ["a", "b"]) == "gpuci.runners/pool in (a,b)"


def test_ownership_labels_cannot_be_replaced():
    with pytest.raises(ValidationError, match="cannot replace"):
        ownership_labels({"app.kubernetes.io/part-of": "other"})


def test_no_pools_plan_nothing():
    plan = gitlab_runner_plan(settings())
    assert plan["releases"] == plan["access"] == plan["secrets"] == plan["pools"] == []


def test_a_bad_pool_is_named_by_its_inventory_path_and_nothing_is_planned():
    plan = gitlab_runner_plan(settings(dict(L40S, gpus=0), dict(CPU, gitlab_url="gitlab.example.com")))
    assert list(plan) == ["problems"]
    assert [text.partition(": ")[0] for text in plan["problems"]] == [
        "gitlab_runner_pools[name=l40s].gpus", "gitlab_runner_pools[name=cpu].gitlab_url"]
    assert not any("SECRET" in text for text in plan["problems"])


def test_a_good_plan_has_no_problems():
    assert gitlab_runner_plan(settings(L40S, CPU, GONE))["problems"] == []


def test_token_secrets_take_created_tokens_first_and_annotate_them():
    plan = gitlab_runner_plan(settings(L40S, CPU))
    secrets = gitlab_runner_token_secrets({"secrets": plan["secrets"], "tokens": {"l40s": "glrt-A", "cpu": ""},
                                           "created": {"cpu": "glrt-B"}})
    assert [s["metadata"]["name"] for s in secrets] == ["gitlab-runner-l40s-token", "gitlab-runner-cpu-token"]
    assert base64.b64decode(secrets[0]["data"]["runner-token"]) == b"glrt-A"
    assert secrets[0]["metadata"]["annotations"] == {}
    assert base64.b64decode(secrets[1]["data"]["runner-token"]) == b"glrt-B"
    assert secrets[1]["metadata"]["annotations"] == {"gpuci.runners/created-in-gitlab": "https://other.example.com/"}
    assert all(s["data"]["runner-registration-token"] == "" for s in secrets)


def test_token_secrets_refuse_a_pool_without_token_naming_only_the_pool():
    plan = gitlab_runner_plan(settings(L40S))
    with pytest.raises(ValidationError, match=r"gitlab_runner_pools\[name=l40s\]\.token") as caught:
        gitlab_runner_token_secrets({"secrets": plan["secrets"], "tokens": {}, "created": {}})
    assert "glrt" not in str(caught.value)


def test_release_selector_names_only_the_present_pools_releases():
    plan = gitlab_runner_plan(settings({"name": "a"}, {"name": "gone", "state": "absent"}, {"name": "b"}))
    assert plan["release_selector"] == "release in (gitlab-runner-a,gitlab-runner-b)"
    assert plan["pool_label"] == "gpuci.runners/pool"
    assert plan["created_annotation"] == "gpuci.runners/created-in-gitlab"


def test_the_role_creates_runners_only_for_present_pools_without_a_token():
    absent_without_token = {"name": "old", "state": "absent"}
    plan = gitlab_runner_plan(settings(L40S, CPU, absent_without_token, {"name": "new", "token": ""}))
    assert plan["created_pools"] == ["cpu", "new"]
    assert plan["created_selectors"] == plan["label_selectors"] + ["gpuci.runners/pool in (cpu,new)"]
    assert "glrt-PLAN-SECRET" not in repr(plan)


def test_no_runner_to_create_selects_nothing():
    plan = gitlab_runner_plan(settings(L40S, GONE))
    assert (plan["created_pools"], plan["created_selectors"]) == ([], [])


def test_the_chart_source_is_checked_only_when_a_pool_is_installed():
    with pytest.raises(ValidationError, match=r"^gitlab_runner_chart_version: must be a pinned chart version"):
        gitlab_runner_plan(settings(L40S, gitlab_runner_chart_version="latest"))
    # Nothing of GitLab's declared, or only pools to remove: no chart is fetched, so none is checked.
    assert gitlab_runner_plan(settings(gitlab_runner_chart_version="latest"))["releases"] == []
    assert gitlab_runner_plan(settings(GONE, gitlab_runner_chart_version="latest"))["releases"] == []


def test_each_pool_config_is_rendered_once_and_is_what_its_release_carries(calls):
    rendered = calls(gitlab_runner_config_module, "gitlab_runner_document")
    plan = gitlab_runner_plan(settings(L40S, CPU, GONE))
    assert rendered == ["l40s", "cpu"]
    (l40s,) = [release for release in plan["releases"] if release["values"]["runners"]["name"] == "l40s"]
    expected = gitlab_runner_config_module.gitlab_runner_config(plan["pools"][0], None, "pool")
    assert l40s["values"]["runners"]["config"] == expected


def test_config_problems_come_in_the_inventory_order_among_the_other_rules():
    turned_off = dict(CPU, extra_config={"feature_flags": {"FF_USE_ADVANCED_POD_SPEC_CONFIGURATION": False}})
    plan = gitlab_runner_plan(settings(dict(L40S, gitlab_url="nope"), turned_off, dict(L40S, name="l40s-b", gpus=-1)))
    assert [text.partition(": ")[0] for text in plan["problems"]] == [
        "gitlab_runner_pools[name=l40s].gitlab_url",
        "gitlab_runner_pools[name=cpu].extra_config.feature_flags.FF_USE_ADVANCED_POD_SPEC_CONFIGURATION",
        "gitlab_runner_pools[name=l40s-b].gpus"]


def test_every_release_turns_the_managers_metrics_on_with_the_chart_podmonitor_relabelled():
    plan = gitlab_runner_plan(settings(L40S, CPU, gitlab_runner_pod_monitor_labels={"release": "kube-prometheus-stack"}))
    l40s, cpu = (release["values"] for release in plan["releases"])
    assert l40s["metrics"]["enabled"] is True
    assert (l40s["metrics"]["portName"], l40s["metrics"]["port"]) == ("metrics", 9252)
    monitor = l40s["metrics"]["podMonitor"]
    # Off until the converge's decision, which knows whether the cluster has the CRD.
    assert monitor["enabled"] is False
    assert monitor["labels"]["release"] == "kube-prometheus-stack"
    assert monitor["labels"]["gpuci.runners/pool"] == "l40s"
    assert [entry["targetLabel"] for entry in monitor["relabelings"]] == ["job", "pool", "gpu_class"]
    assert l40s["podLabels"]["gpuci.runners/gpu-class"] == "l40s"
    assert "gpuci.runners/gpu-class" not in cpu["podLabels"] and cpu["podLabels"]["gpuci.runners/pool"] == "cpu"


def test_metrics_off_leave_the_chart_default_and_read_no_crd():
    plan = gitlab_runner_plan(settings(L40S, gitlab_runner_metrics=False))
    assert "metrics" not in plan["releases"][0]["values"]
    assert plan["pod_monitors"]["mode"] == "off"
    assert "pod_monitor_crd" not in [read["key"] for read in plan["reads"]]


def test_the_podmonitor_crd_is_read_unless_monitors_are_off_or_no_pool_is_present():
    def keys(**overrides):
        return [read["key"] for read in gitlab_runner_plan(settings(L40S, **overrides))["reads"]]
    assert "pod_monitor_crd" in keys() and "pod_monitor_crd" in keys(gitlab_runner_pod_monitors="on")
    assert "pod_monitor_crd" not in keys(gitlab_runner_pod_monitors="off")
    assert "pod_monitor_crd" not in [read["key"] for read in gitlab_runner_plan(settings(GONE))["reads"]]


@pytest.mark.parametrize("overrides, expected", [
    ({"gitlab_runner_pod_monitors": "always"}, "gitlab_runner_pod_monitors: must be one of auto, on, off"),
    ({"gitlab_runner_pod_monitor_labels": {"release": 1}}, "gitlab_runner_pod_monitor_labels.release: must be a string"),
    ({"gitlab_runner_metrics": "yes"}, "gitlab_runner_metrics: must be true or false"),
    ({"gitlab_runner_metrics": False, "gitlab_runner_pod_monitors": "on"},
     "gitlab_runner_pod_monitors: is on, but gitlab_runner_metrics is false"),
])
def test_bad_monitoring_settings_are_refused_by_name_before_any_plan(overrides, expected):
    (problem,) = gitlab_runner_plan(settings(L40S, **overrides))["problems"]
    assert problem.startswith(expected)


def test_the_decision_turns_the_chart_podmonitor_on_where_the_crd_is():
    from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import pod_monitor_releases
    crd = [{"metadata": {"name": "podmonitors.monitoring.coreos.com"}}]
    plan = gitlab_runner_plan(settings(L40S))
    releases, refusal = pod_monitor_releases(plan, crd)
    assert refusal == "" and releases[0]["values"]["metrics"]["podMonitor"]["enabled"] is True
    assert plan["releases"][0]["values"]["metrics"]["podMonitor"]["enabled"] is False, "the plan is not changed"
    assert pod_monitor_releases(plan, [])[0][0]["values"]["metrics"]["podMonitor"]["enabled"] is False
    releases, refusal = pod_monitor_releases(gitlab_runner_plan(settings(L40S, gitlab_runner_pod_monitors="on")), [])
    assert releases == [] and refusal.startswith("gitlab_runner_pod_monitors: is on, but the cluster has no")
    unmetered = gitlab_runner_plan(settings(L40S, gitlab_runner_metrics=False))
    assert pod_monitor_releases(unmetered, crd)[0] == unmetered["releases"]


@pytest.mark.parametrize("state", ["present", "absent"])
def test_a_wait_timeout_that_is_no_number_is_a_problem_naming_it_not_an_int_error(state):
    plan = gitlab_runner_plan(settings(L40S, gitlab_runner_wait_timeout="five minutes", gitlab_runner_state=state))
    assert plan == {"problems": ["gitlab_runner_wait_timeout: must be a whole number of seconds >= 1, such as 600 "
                                 "(got 'five minutes')"]}
