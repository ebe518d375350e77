# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The deprecation stage (module_utils/common/deprecations.py): an old spelling is read under its new name, with a
deprecation naming the new spelling and the version that refuses the old one (docs/deprecation.md).

No spelling is deprecated today, so these tests use tables of their own.
"""

import pytest

from ansible_collections.gpuci.runners.plugins.action.role_plan import role_plan
from ansible_collections.gpuci.runners.plugins.module_utils.common import deprecations
from ansible_collections.gpuci.runners.plugins.module_utils.common.deprecations import (
    COLLECTION,
    Deprecation,
    renamed_pool_keys,
    renamed_variables,
)

KEYS = {"accelerator": Deprecation("gpu_class", "0.5.0")}
VARIABLES = {"gitlab_runner_timeout": Deprecation("gitlab_runner_wait_timeout", "0.5.0")}


def test_an_old_key_is_read_under_its_new_name_with_a_deprecation():
    pools = [{"name": "l40s", "accelerator": "l40s", "gpus": 1}]
    renamed, found, problems = renamed_pool_keys(pools, "gitlab_runner_pools", KEYS)
    assert renamed == [{"name": "l40s", "gpu_class": "l40s", "gpus": 1}] and problems == []
    assert pools == [{"name": "l40s", "accelerator": "l40s", "gpus": 1}], "the inventory's pool is not changed"
    assert found == [{
        "msg": "gitlab_runner_pools[name=l40s].accelerator is deprecated: write gitlab_runner_pools[name=l40s]."
               "gpu_class instead (same values); gpuci.runners 0.5.0 refuses gitlab_runner_pools[name=l40s].accelerator",
        "version": "0.5.0", "collection_name": COLLECTION}]


def test_both_spellings_at_once_is_a_problem_naming_both():
    _renamed, found, problems = renamed_pool_keys([{"name": "a", "accelerator": "l40s", "gpu_class": "a10"}],
                                                  "arc_runners_scale_sets", KEYS)
    assert found == []
    assert problems == ["arc_runners_scale_sets[name=a].accelerator: is the deprecated spelling of "
                        "arc_runners_scale_sets[name=a].gpu_class, which is set too; remove accelerator"]


def test_entries_without_old_keys_and_odd_input_pass_unchanged():
    pool = {"name": "cpu"}
    renamed, found, problems = renamed_pool_keys([pool, "not-a-mapping"], "gitlab_runner_pools", KEYS)
    assert renamed[0] is pool and renamed[1] == "not-a-mapping" and found == problems == []
    assert renamed_pool_keys(None, "gitlab_runner_pools", KEYS) == (None, [], [])


def test_an_old_variable_is_used_when_the_new_one_keeps_its_default():
    settings, found, problems = renamed_variables("gitlab_runner", {"gitlab_runner_wait_timeout": 300},
                                                  {"gitlab_runner_timeout": 600},
                                                  {"gitlab_runner_wait_timeout": 300}, VARIABLES)
    assert settings == {"gitlab_runner_wait_timeout": 600} and problems == []
    assert found[0]["msg"].startswith("gitlab_runner_timeout is deprecated: write gitlab_runner_wait_timeout instead")
    assert found[0]["version"] == "0.5.0"


def test_an_old_variable_beside_a_new_one_the_inventory_set_is_a_problem():
    settings, found, problems = renamed_variables("gitlab_runner", {"gitlab_runner_wait_timeout": 120},
                                                  {"gitlab_runner_timeout": 600},
                                                  {"gitlab_runner_wait_timeout": 300}, VARIABLES)
    assert settings == {"gitlab_runner_wait_timeout": 120} and found == []
    assert problems == ["gitlab_runner_timeout: is the deprecated spelling of gitlab_runner_wait_timeout, which is "
                        "set too; remove gitlab_runner_timeout"]


def test_an_unset_old_variable_changes_nothing():
    assert renamed_variables("gitlab_runner", {"gitlab_runner_wait_timeout": 300}, {}, {}, VARIABLES) == (
        {"gitlab_runner_wait_timeout": 300}, [], [])


@pytest.fixture
def deprecated_key(monkeypatch):
    monkeypatch.setattr(deprecations, "DEPRECATED_POOL_KEYS", KEYS)
    monkeypatch.setitem(deprecations.DEPRECATED_VARIABLES, "gitlab_runner", VARIABLES)


def gitlab_settings(pool, **overrides):
    return dict({"gitlab_runner_pools": [pool], "gitlab_runner_namespace": "gitlab-runner",
                 "gitlab_runner_fleet": "ci", "gitlab_runner_gitlab_url": "https://gitlab.example.com/",
                 "gitlab_runner_concurrent": 2, "gitlab_runner_runtime_class": None,
                 "gitlab_runner_manager_resources": {}, "gitlab_runner_job_rbac_rules": [],
                 "gitlab_runner_extra_values": {}, "gitlab_runner_chart_version": "0.86.0",
                 "gitlab_runner_chart_repo_url": "https://charts.gitlab.io", "gitlab_runner_chart_path": "",
                 "gitlab_runner_wait_timeout": 300, "gitlab_runner_access_token": "",
                 "gitlab_runner_state": "present", "gitlab_runner_prune": True}, **overrides)


def test_the_role_plan_reads_the_old_spelling_and_returns_its_deprecation(deprecated_key):
    pool = {"name": "l40s", "accelerator": "l40s", "gpus": 1, "token": "glrt-x"}
    result = role_plan("gitlab_runner", gitlab_settings(pool), user_vars={"gitlab_runner_timeout": 600},
                       defaults={"gitlab_runner_wait_timeout": 300})
    assert not result.get("failed"), result.get("msg")
    (release,) = result["releases"]
    assert release["timeout"] == 600
    assert "l40s" in release["values"]["runners"]["config"]  # the GPU class reached the config.toml
    assert [d["version"] for d in result["deprecations"]] == ["0.5.0", "0.5.0"]
    assert [d["msg"].split(" ")[0] for d in result["deprecations"]] == [
        "gitlab_runner_timeout", "gitlab_runner_pools[name=l40s].accelerator"]


def test_the_role_plan_refuses_both_spellings_with_the_plans_other_problems(deprecated_key):
    pool = {"name": "l40s", "accelerator": "l40s", "gpu_class": "l40s", "token": "glrt-x"}
    result = role_plan("gitlab_runner", gitlab_settings(pool))
    assert result["failed"] and "remove accelerator" in result["msg"]


def test_without_old_spellings_the_result_has_no_deprecations():
    result = role_plan("gitlab_runner", gitlab_settings({"name": "cpu", "token": "glrt-x"}))
    assert not result.get("failed") and "deprecations" not in result


def test_an_old_class_key_is_read_under_its_new_name_naming_the_class():
    classes = {"a10": {"product": "NVIDIA-A10", "access": ["cuda"]}}
    renamed, found, problems = deprecations.renamed_class_keys(classes, {"access": Deprecation("gpu_access", "0.5.0")})
    assert renamed == {"a10": {"product": "NVIDIA-A10", "gpu_access": ["cuda"]}} and problems == []
    assert found[0]["msg"].startswith("gpu_classes.a10.access is deprecated: write gpu_classes.a10.gpu_access")


def test_the_canary_reports_a_pool_once_though_it_reads_the_list_twice(deprecated_key):
    pools = [{"name": "l40s", "accelerator": "l40s"}]
    settings, _classes, found, problems = deprecations.read_old_spellings(
        "gpu_canary", {"gitlab_runner_pools": pools, "gpu_canary_gitlab_pools": list(pools)}, {}, {})
    assert settings["gitlab_runner_pools"] == settings["gpu_canary_gitlab_pools"] == [
        {"name": "l40s", "gpu_class": "l40s"}]
    assert [d["msg"].split(" ")[0] for d in found] == ["gitlab_runner_pools[name=l40s].accelerator"]
    assert problems == []
