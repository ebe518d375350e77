# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which variables of the collection's prefixes a host may carry (module_utils/common/known_variables.py):
a misspelt one is refused with the nearest known name, a known one passes, families pass by prefix."""
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpuci.runners.plugins.module_utils.common import deprecations
from ansible_collections.gpuci.runners.plugins.module_utils.common import known_variables as module
from ansible_collections.gpuci.runners.plugins.module_utils.common.known_variables import (
    known_names,
    nearest,
    refusal,
    spec_variables,
    unknown_variables,
)

REPO = Path(__file__).resolve().parents[5]
SPECS = {path.parents[1].name: yaml.safe_load(path.read_text())
         for path in sorted(REPO.glob("roles/*/meta/argument_specs.yml"))}


def spec(**options):
    """A role's argument spec with these main options, and a list entry point whose keys are no variables."""
    return {"argument_specs": {"main": {"options": options},
                               "pool": {"options": {"gitlab_runner_looks_like_a_variable": {"type": "str"}}}}}


@pytest.mark.parametrize("typo, meant", [
    ("gitlab_runner_pool", "gitlab_runner_pools"),
    ("gitlab_runner_namepsace", "gitlab_runner_namespace"),
    ("arc_runners_scale_set", "arc_runners_scale_sets"),
    ("gpu_operator_mig_stratgy", "gpu_operator_mig_strategy"),
    ("container_toolkit_verison", "container_toolkit_version"),
    ("gpu_canary_job_timout", "gpu_canary_job_timeout"),
    ("gpuci_kubeconfg", "gpuci_kubeconfig"),
    ("gpuci_kube_contxt", "gpuci_kube_context"),
    ("gpuci_survey_gitlab_runner_stat", "gpuci_survey_gitlab_runner_state"),
])
def test_a_typo_is_unknown_and_suggests_the_name_it_meant(typo, meant):
    assert unknown_variables([typo, meant], SPECS) == [(typo, meant)]


def test_the_refusal_names_the_typo_the_suggestion_and_where_it_was_set():
    message = refusal([("gitlab_runner_pool", "gitlab_runner_pools"), ("gitlab_runner_foo", None)],
                      {"gitlab_runner_pool": "/inv/group_vars/all/gitlab_runner.yml:3:1"})
    assert "gitlab_runner_pool: unknown variable; did you mean gitlab_runner_pools? " \
           "(set in /inv/group_vars/all/gitlab_runner.yml:3:1)" in message
    assert "gitlab_runner_foo: unknown variable; no role or playbook of gpuci.runners reads it" in message
    assert module.UNCHECKED_VARIABLE in message
    assert refusal([]) == ""


def test_a_name_with_no_close_match_gets_no_suggestion():
    """The prefix lends no likeness: gitlab_runner_foo shares 15 of its 17 letters with gitlab_runner_fleet."""
    assert unknown_variables(["gitlab_runner_foo", "gpuci_xyz"], SPECS) == [
        ("gitlab_runner_foo", None), ("gpuci_xyz", None)]


def test_every_role_variable_of_every_spec_is_known():
    names = spec_variables(SPECS)
    assert {"gitlab_runner_pools", "arc_runners_scale_sets", "gpu_operator_mig_strategy", "container_toolkit_version",
            "gpu_canary_namespace", "gpu_classes", "gitlab_runner_allow_removing_all_pools"} <= names
    assert unknown_variables(names, SPECS) == []


def test_every_default_of_every_role_is_a_known_name():
    defaults = set()
    for path in REPO.glob("roles/*/defaults/main.yml"):
        defaults.update(yaml.safe_load(path.read_text()) or {})
    assert len(defaults) > 100
    assert unknown_variables(defaults, SPECS) == []


def test_collection_wide_and_playbook_variables_are_known():
    names = ["gpuci_kubeconfig", "gpuci_kube_context", "gpuci_plan_dir", "gpuci_simulated_cluster",
             "gpuci_gitlab_runner_tokens", "gpuci_github_token", "gpuci_github_app_private_key",
             "gpuci_alert_rules_dir", "gpuci_alert_queue_seconds", "gpuci_unchecked_variables"]
    assert unknown_variables(names, SPECS) == []


def test_only_the_main_entry_point_holds_variables():
    """A list entry's keys (gitlab_runner's pool entry point) are no variables of the host."""
    specs = {"gitlab_runner": spec(gitlab_runner_pools={"type": "list"})}
    assert spec_variables(specs) == {"gitlab_runner_pools"}
    assert unknown_variables(["gitlab_runner_looks_like_a_variable"], specs)[0][0] == "gitlab_runner_looks_like_a_variable"
    # A new role variable is known as soon as its spec says so.
    assert unknown_variables(["gitlab_runner_brand_new"], {"r": spec(gitlab_runner_brand_new={})}) == []


@pytest.mark.parametrize("name", ["gpuci_testbed_gitlab_url", "gpuci_testbed_anything_new", "gpuci_kind_gpu",
                                  "gpuci_awx_organization", "gpuci_survey_gpu_operator_driver_enabled"])
def test_the_families_pass_by_prefix(name):
    assert unknown_variables([name], SPECS) == []


def test_a_survey_answer_of_no_role_variable_is_unknown():
    assert unknown_variables(["gpuci_survey_gpu_operator_no_such_thing"], SPECS) == [
        ("gpuci_survey_gpu_operator_no_such_thing", None)]


@pytest.mark.parametrize("name", ["ansible_host", "ansible_python_interpreter", "inventory_hostname", "groups",
                                  "hostvars", "omit", "playbook_dir", "_gitlab_runner_plan_input",
                                  "__gitlab_runner_plan", "vault_gitlab_runner_tokens", "gitlab_runners_pools",
                                  "gpu_classes", "my_gpuci_helper"])
def test_names_without_a_prefix_of_the_collection_are_never_looked_at(name):
    assert unknown_variables([name], {}) == []


def test_the_users_own_names_listed_as_unchecked_pass():
    names = ["gitlab_runner_coordinator_url", "gitlab_runner_registration_token", "gitlab_runner_pool"]
    unknown = unknown_variables(names, SPECS, unchecked=["gitlab_runner_coordinator_url", "gitlab_runner_regis*"])
    assert unknown == [("gitlab_runner_pool", "gitlab_runner_pools")]


def test_a_deprecated_spelling_still_read_is_not_refused(monkeypatch):
    """Old names in the deprecation table, and those the argument specs still document, stay accepted."""
    table = dict(deprecations.DEPRECATED_VARIABLES,
                 gitlab_runner={"gitlab_runner_old_pools": deprecations.Deprecation("gitlab_runner_pools", "0.5.0")})
    monkeypatch.setattr(module, "DEPRECATED_VARIABLES", table)
    assert "gitlab_runner_old_pools" in known_names(SPECS)
    assert unknown_variables(["gitlab_runner_old_pools"], SPECS) == []
    documented = {"gitlab_runner": spec(gitlab_runner_legacy={"type": "str", "removed_in_version": "0.5.0",
                                                              "removed_from_collection": "gpuci.runners"})}
    assert unknown_variables(["gitlab_runner_legacy"], documented) == []


def test_the_nearest_name_is_compared_within_its_prefix():
    known = {"gitlab_runner_pools", "arc_runners_pools_like", "gpuci_survey_gitlab_runner_pools"}
    assert nearest("gitlab_runner_pool", known) == "gitlab_runner_pools"
    # A survey answer is suggested only for a survey answer.
    assert nearest("gpuci_survey_gitlab_runner_pool", known) == "gpuci_survey_gitlab_runner_pools"
    assert nearest("gitlab_runner_zzz", known) is None
