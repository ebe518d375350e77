# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gitlab_runner role's per-pool rules: each passes a good pool, and refuses a bad one naming its inventory path."""

import copy
import pathlib

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.preflight import (
    gitlab_runner_preflight,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.release_names import (
    GITLAB_POOL_NAME_MAX,
    GITLAB_RELEASE_PREFIX,
    HELM_RELEASE_NAME_MAX,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

REPO = pathlib.Path(__file__).resolve().parents[5]
TOKEN = "glrt-UNIT-SECRET-123"
ACCESS_TOKEN = "glpat-UNIT-SECRET-456"
SECRETS = (TOKEN, ACCESS_TOKEN, "GR1348941-UNIT-SECRET", "glrt-UNIT", "UNIT-SECRET")


def settings(*pools, **role):
    base = {
        "gitlab_runner_pools": list(pools) or [{"name": "l40s", "gpu_class": "l40s", "token": TOKEN}],
        "gitlab_runner_state": "present",
        "gitlab_runner_namespace": "gitlab-runner",
        "gitlab_runner_fleet": "default",
        "gitlab_runner_gitlab_url": "https://gitlab.example.com",
        "gitlab_runner_concurrent": 1,
        "gitlab_runner_access_token": "",
        "gitlab_runner_manager_resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
        "gitlab_runner_runtime_class": None,
    }
    base.update(role)
    return base


def pool(**keys):
    result = {"name": "l40s", "gpu_class": "l40s", "token": TOKEN}
    result.update(keys)
    return result


def problems_of(value):
    problems = gitlab_runner_preflight(value)
    for text in problems:
        assert not any(secret in text for secret in SECRETS), text
    return problems


def refused(value, path, reason):
    problems = problems_of(value)
    assert any(text.startswith(path + ": ") and reason in text for text in problems), problems
    return problems


def test_good_pools_pass():
    assert problems_of(settings()) == []
    assert problems_of(settings(pool(), pool(name="cpu", gpu_class=None, token=TOKEN, hpa={"max_replicas": 3}))) == []


def test_the_name_limit_follows_helm_and_the_release_prefix():
    assert GITLAB_POOL_NAME_MAX == HELM_RELEASE_NAME_MAX - len(GITLAB_RELEASE_PREFIX) == 39
    # The prefix lives in Python only: the role takes release names and selectors from its plan.
    role = "\n".join(path.read_text() for path in (REPO / "roles" / "gitlab_runner").rglob("*.yml"))
    assert GITLAB_RELEASE_PREFIX not in role.replace("gitlab-runner-<", "")


def test_repeated_names_are_refused_once():
    problems = refused(settings(pool(name="twin"), pool(name="twin", gpu_class="a10")),
                       "gitlab_runner_pools[name=twin].name", "must be unique: 2 pools")
    assert len([text for text in problems if "unique" in text]) == 1


@pytest.mark.parametrize("name", ["GPU_Pool", "-x", "a" * 40])
def test_names_that_cannot_name_a_release_are_refused(name):
    refused(settings(pool(name=name)), "gitlab_runner_pools[name=%s].name" % name, "at most 39 characters")


def test_a_name_of_39_characters_passes():
    assert problems_of(settings(pool(name="a" * 39))) == []


@pytest.mark.parametrize("token", [None, "", "GR1348941-UNIT-SECRET", "glrt-UNIT SECRET"])
def test_present_pools_need_an_authentication_token(token):
    entry = pool(name="tokenless")
    entry["token"] = token
    refused(settings(entry), "gitlab_runner_pools[name=tokenless].token", "registration tokens are refused")


def test_a_tokenless_pool_passes_when_the_role_creates_its_runner():
    entry = pool(name="created")
    del entry["token"]
    assert problems_of(settings(entry, gitlab_runner_access_token=ACCESS_TOKEN)) == []
    assert problems_of(settings(dict(entry, token=""), gitlab_runner_access_token=ACCESS_TOKEN)) == []


def test_tokens_are_not_needed_to_tear_down():
    entry = pool()
    del entry["token"]
    assert problems_of(settings(entry, gitlab_runner_state="absent")) == []
    assert problems_of(settings(dict(entry, state="absent"))) == []


def test_the_access_token_must_be_one():
    refused(settings(gitlab_runner_access_token="glrt-UNIT-SECRET-789"), "gitlab_runner_access_token",
            "must be a GitLab access token")


def test_group_and_project_together_are_refused():
    assert problems_of(settings(pool(gitlab_group="ci"))) == []
    refused(settings(pool(gitlab_group="ci", gitlab_project="ci/app")), "gitlab_runner_pools[name=l40s].gitlab_project",
            "not both")


def test_namespaces_must_be_dns_labels():
    assert problems_of(settings(pool(namespace="ci-jobs"))) == []
    refused(settings(pool(namespace="CI_Jobs")), "gitlab_runner_pools[name=l40s].namespace", "'CI_Jobs'")
    refused(settings(gitlab_runner_namespace="Runner"), "gitlab_runner_namespace", "DNS label")


@pytest.mark.parametrize("fleet", ["", "-edge", "a" * 64, "two words"])
def test_the_fleet_must_be_a_label_value(fleet):
    refused(settings(gitlab_runner_fleet=fleet), "gitlab_runner_fleet", "label value")


def test_fleet_label_values_may_hold_dots_and_capitals():
    assert problems_of(settings(gitlab_runner_fleet="Edge_1.a")) == []


def test_a_pool_url_must_be_http():
    assert problems_of(settings(pool(gitlab_url="http://gitlab.local:8080"))) == []
    refused(settings(pool(gitlab_url="gitlab.example.com")), "gitlab_runner_pools[name=l40s].gitlab_url", "http(s) URL")


def test_the_role_url_is_named_when_the_pool_takes_it():
    refused(settings(gitlab_runner_gitlab_url="https:/gitlab.example.com"), "gitlab_runner_gitlab_url", "http(s) URL")


def test_urls_of_absent_pools_are_not_checked():
    assert problems_of(settings(pool(state="absent", gitlab_url="nowhere"))) == []


@pytest.mark.parametrize("value", ["many", 0, "0", True])
def test_the_role_concurrent_must_be_a_count(value):
    refused(settings(gitlab_runner_concurrent=value), "gitlab_runner_concurrent", "must be an integer >= 1")


def test_the_role_concurrent_given_by_extra_vars_is_its_number():
    """-e gitlab_runner_concurrent=4 hands the role a string of digits, as Ansible's int type accepts it."""
    assert problems_of(settings(pool(), gitlab_runner_concurrent="4")) == []


def test_a_bad_role_concurrent_is_one_problem_whatever_the_pools_taking_it():
    problems = problems_of(settings(pool(), pool(name="a10", gpu_class="a10"), gitlab_runner_concurrent=0))
    assert problems == ["gitlab_runner_concurrent: must be an integer >= 1 (got 0)"]


def test_a_pool_concurrent_is_checked_at_the_pool():
    assert problems_of(settings(pool(concurrent=4), gitlab_runner_concurrent="x")) == []
    refused(settings(pool(concurrent="many")), "gitlab_runner_pools[name=l40s].concurrent", "must be an integer")


def test_hpa_min_must_not_exceed_max():
    assert problems_of(settings(pool(hpa={"min_replicas": 2, "max_replicas": 2}))) == []
    refused(settings(pool(hpa={"min_replicas": 3, "max_replicas": 1})), "gitlab_runner_pools[name=l40s].hpa.min_replicas",
            "must not exceed hpa.max_replicas (1) (got 3)")


def test_hpa_min_defaults_to_one():
    refused(settings(pool(hpa={"max_replicas": 0})), "gitlab_runner_pools[name=l40s].hpa.min_replicas", "must not exceed")


def test_hpa_needs_at_least_one_replica():
    refused(settings(pool(hpa={"min_replicas": 0, "max_replicas": 2})), "gitlab_runner_pools[name=l40s].hpa.min_replicas",
            "must be >= 1")


def test_hpa_needs_the_managers_cpu_request():
    assert problems_of(settings(pool(hpa={"max_replicas": 2}, resources={"requests": {"cpu": "1"}}),
                                gitlab_runner_manager_resources={})) == []
    refused(settings(pool(hpa={"max_replicas": 2}), gitlab_runner_manager_resources={"limits": {"cpu": "1"}}),
            "gitlab_runner_manager_resources.requests.cpu", "is required by gitlab_runner_pools[name=l40s].hpa")
    refused(settings(pool(hpa={"max_replicas": 2}, resources={"requests": {"memory": "1Gi"}})),
            "gitlab_runner_pools[name=l40s].resources.requests.cpu", "is required")


def test_gpu_keys_are_checked_by_rendering_config_toml():
    refused(settings(pool(gpus=0)), "gitlab_runner_pools[name=l40s].gpus", "must be an integer >= 1")
    refused(settings(pool(gpu_class="v100")), "gitlab_runner_pools[name=l40s].gpu_class", "unknown GPU class")


def test_gpu_classes_of_the_inventory_count():
    assert problems_of(settings(pool(gpu_class="l4"))) != []
    assert gitlab_runner_preflight(settings(pool(gpu_class="l4")), {"l4": {"product": "NVIDIA-L4", "gpu_access": ["cuda"]}}) == []


def test_absent_pools_are_not_rendered():
    assert problems_of(settings(pool(state="absent", gpus=0))) == []


def test_every_problem_is_reported_at_once():
    problems = problems_of(settings(pool(name="Bad"), pool(name="ok", namespace="X", hpa={"min_replicas": 2, "max_replicas": 1}),
                                    gitlab_runner_fleet=""))
    assert len(problems) == 4, problems


def test_a_nameless_pool_is_named_by_its_index():
    refused(settings(pool(), {"gpu_class": "l40s", "token": TOKEN}), "gitlab_runner_pools[1].name", "DNS label")


def test_pools_must_be_a_list_of_mappings():
    with pytest.raises(ValidationError, match=r"^gitlab_runner_pools: must be a list"):
        gitlab_runner_preflight(settings(gitlab_runner_pools={"name": "l40s"}))
    with pytest.raises(ValidationError, match=r"^gitlab_runner_pools\[0\]: must be a mapping"):
        gitlab_runner_preflight(settings(gitlab_runner_pools=["l40s"]))


def test_tokens_never_appear_in_any_problem():
    bad = copy.deepcopy([pool(name="Bad_" + TOKEN[:4], gpus=0, token="GR1348941-UNIT-SECRET", namespace="X",
                              hpa={"min_replicas": 5, "max_replicas": 1}, gitlab_url="nowhere"),
                         pool(name="ok", token=TOKEN, extra={"x": 1})])
    problems = gitlab_runner_preflight(settings(*bad, gitlab_runner_access_token="glrt-UNIT-SECRET-789"))
    assert problems
    text = "\n".join(problems)
    for secret in ("GR1348941-UNIT-SECRET", TOKEN, "glrt-UNIT-SECRET-789"):
        assert secret not in text


# `lane`, gpu_access's old name, is no longer read: a pool that writes it is refused by its inventory path,
# with the key to write instead (`lane` is the canary's word only).
@pytest.mark.parametrize("extra", [{}, {"gpu_access": "cuda"}])
def test_lane_is_refused_naming_the_pool_and_gpu_access(extra):
    problems = refused(settings(pool(lane="cuda", **extra), pool(name="cpu", gpu_class=None)),
                       "gitlab_runner_pools[name=l40s].lane",
                       "was renamed gpu_access; set gitlab_runner_pools[name=l40s].gpu_access instead")
    assert len(problems) == 1, problems  # the other pool is fine


def test_lane_on_a_nameless_pool_is_named_by_its_index():
    refused(settings({"gpu_class": "dri", "lane": "dri", "token": TOKEN}), "gitlab_runner_pools[0].lane",
            "set gitlab_runner_pools[0].gpu_access instead")


@pytest.mark.parametrize("key", ["runnerToken", "runnerRegistrationToken"])
def test_a_token_in_the_extra_chart_values_is_refused_and_never_shown(key):
    refused(settings(gitlab_runner_extra_values={key: TOKEN, "rbac": {"create": False}}),
            "gitlab_runner_extra_values", "must not set %s: Helm would store the token" % key)
    assert problems_of(settings(gitlab_runner_extra_values={"rbac": {"create": False}})) == []


# What argument validation used to check in a pool's keys is checked here, so that every problem of a pool
# names it the one way (gitlab_runner_pools[name=x].key), whichever key it is.
@pytest.mark.parametrize("keys, path, reason", [
    ({"state": "gone"}, "gitlab_runner_pools[name=l40s].state", "must be one of present, absent"),
    ({"gitlab_group": 5}, "gitlab_runner_pools[name=l40s].gitlab_group", "must be a GitLab group or project path"),
    ({"gitlab_project": ""}, "gitlab_runner_pools[name=l40s].gitlab_project", "must be a GitLab group or project path"),
    ({"hpa": {"max_replicas": 3, "min": 1}}, "gitlab_runner_pools[name=l40s].hpa.min", "unknown key"),
    ({"hpa": {"max_replicas": "three"}}, "gitlab_runner_pools[name=l40s].hpa.max_replicas", "must be an integer"),
    ({"resources": {"request": {"cpu": "1"}}}, "gitlab_runner_pools[name=l40s].resources.request", "unknown key"),
    ({"resources": {"limits": "1Gi"}}, "gitlab_runner_pools[name=l40s].resources.limits", "must be a mapping"),
])
def test_every_key_of_a_pool_is_checked_and_named_with_the_pool(keys, path, reason):
    refused(settings(pool(**keys), gitlab_runner_manager_resources={"requests": {"cpu": "100m"}}), path, reason)


def test_a_bad_role_url_is_one_problem_however_many_pools_take_it():
    """Three pools taking gitlab_runner_gitlab_url used to report it three times."""
    pools = [pool(name=name) for name in ("l40s", "a100", "cpu")]
    problems = problems_of(settings(*pools, gitlab_runner_gitlab_url="https:/bad"))
    assert problems == ["gitlab_runner_gitlab_url: must be an http(s) URL such as https://gitlab.example.com "
                        "(got 'https:/bad')"]
    # A pool with its own URL does not take the role's: then only the role's takers count.
    assert problems_of(settings(pool(gitlab_url="https://gitlab.example.com"), gitlab_runner_gitlab_url="https:/bad")) == []


@pytest.mark.parametrize("keys, path, reason", [
    ({"memory_request": "8GB"}, "gitlab_runner_pools[name=l40s].memory_request",
     "is not a Kubernetes quantity (e.g. 8Gi, 8G, 512Mi, 500m, 2) (got '8GB')"),
    ({"cpu_request": ""}, "gitlab_runner_pools[name=l40s].cpu_request", "is not a Kubernetes quantity"),
    ({"cpu_request": "2", "cpu_limit": "1500m"}, "gitlab_runner_pools[name=l40s].cpu_request",
     "must not exceed gitlab_runner_pools[name=l40s].cpu_limit (1500m)"),
    ({"extra_config": {"kubernetes": {"ephemeral_storage_request": "10GB"}}},
     "gitlab_runner_pools[name=l40s].extra_config.kubernetes.ephemeral_storage_request", "is not a Kubernetes quantity"),
    ({"memory_limit": "1Gi", "extra_config": {"kubernetes": {"memory_request": "2Gi"}}},
     "gitlab_runner_pools[name=l40s].extra_config.kubernetes.memory_request",
     "must not exceed gitlab_runner_pools[name=l40s].memory_limit (1Gi)"),
    ({"resources": {"requests": {"memory": "128MB"}}}, "gitlab_runner_pools[name=l40s].resources.requests.memory",
     "is not a Kubernetes quantity"),
    ({"resources": {"requests": {"memory": "1Gi"}, "limits": {"memory": "512Mi"}}},
     "gitlab_runner_pools[name=l40s].resources.requests.memory",
     "must not exceed gitlab_runner_pools[name=l40s].resources.limits.memory (512Mi)"),
])
def test_quantities_kubernetes_would_refuse_later_are_refused_now_naming_the_pool(keys, path, reason):
    refused(settings(pool(**keys)), path, reason)


def test_quantities_kubernetes_takes_pass_however_written():
    keys = {"cpu_request": 0.5, "cpu_limit": "1", "memory_request": "1Gi", "memory_limit": "1024Mi",
            "extra_config": {"kubernetes": {"ephemeral_storage_request": "1e9", "helper_memory_limit": "64Mi",
                                            "cpu_limit_overwrite_max_allowed": "4"}}}
    assert problems_of(settings(pool(**keys))) == []


def test_the_role_manager_resources_are_checked_once_when_a_pool_takes_them():
    bad = {"requests": {"cpu": "100m", "memory": "128MB"}}
    pools = [pool(name="a"), pool(name="b")]
    assert problems_of(settings(*pools, gitlab_runner_manager_resources=bad)) == [
        "gitlab_runner_manager_resources.requests.memory: is not a Kubernetes quantity (e.g. 8Gi, 8G, 512Mi, 500m, 2) "
        "(got '128MB')"]
    own = {"requests": {"cpu": "1"}}
    assert problems_of(settings(pool(resources=own), gitlab_runner_manager_resources=bad)) == []


@pytest.mark.parametrize("value, reason", [
    ("five minutes", "must be a whole number of seconds >= 1, such as 600 (got 'five minutes')"),
    ("5m", "for 5m write 300"),
])
def test_the_wait_timeout_is_refused_naming_the_variable(value, reason):
    refused(settings(gitlab_runner_wait_timeout=value), "gitlab_runner_wait_timeout", reason)
    assert problems_of(settings(gitlab_runner_wait_timeout="300")) == []
