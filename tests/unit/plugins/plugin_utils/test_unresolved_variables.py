# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A value that fails to template is named by the path the user wrote, not by the task argument holding it."""

import pytest
from ansible.errors import AnsibleError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.gpuci.runners.plugins.action.role_plan import ActionModule
from ansible_collections.gpuci.runners.plugins.plugin_utils.unresolved_variables import (
    first_unresolved,
    referenced_names,
)

SECRET = "glrt-UNRESOLVED-SECRET"
# role_plan's settings as the gpu_operator role's preflight writes them: it reads the GitLab pools too.
SETTINGS = trust_as_template("{{ {'gpu_operator_namespace': gpu_operator_namespace, "
                             "'gpu_operator_runner_pools': [gitlab_runner_pools | default([])]} }}")


def templar(**variables):
    """A templar over inventory values as Ansible loads them (template strings trusted)."""
    def load(value):
        if isinstance(value, dict):
            return {key: load(element) for key, element in value.items()}
        if isinstance(value, list):
            return [load(element) for element in value]
        return trust_as_template(value) if isinstance(value, str) else value
    return Templar(loader=DataLoader(), variables=load(variables))


def inventory(token="{{ vault_gitlab_runner_tokens['l40S'] }}"):
    return dict(gpu_operator_namespace="gpu-operator", vault_gitlab_runner_tokens={"l40s": SECRET},
                gitlab_runner_pools=[{"name": "cpu", "token": "glrt-plain"}, {"name": "l40s", "token": token}])


def finalize(settings, **variables):
    return ActionModule.finalize_task_arg("settings", settings, templar(**variables), None)


def test_a_vault_key_typo_is_named_by_the_pool_and_key_the_user_wrote():
    with pytest.raises(AnsibleError) as error:
        finalize(SETTINGS, **inventory())
    text = str(error.value)
    assert text.startswith("gitlab_runner_pools[name=l40s].token: cannot be resolved; check the variable or vault key")
    # Ansible's own words follow, naming the missing key; the settings argument and the secret are not named.
    assert "no attribute 'l40S'" in text and "settings" not in text and SECRET not in text


def test_a_missing_variable_is_named_where_it_is_used():
    variables = inventory(token="glrt-x")
    variables["gpu_operator_namespace"] = "{{ no_such_namespace }}"
    with pytest.raises(AnsibleError, match=r"^gpu_operator_namespace: cannot be resolved.*'no_such_namespace' is "
                                           r"undefined"):
        finalize(SETTINGS, **variables)


def test_settings_that_template_are_what_ansible_makes_of_them():
    settings = finalize(SETTINGS, **inventory(token="{{ vault_gitlab_runner_tokens['l40s'] }}"))
    assert settings["gpu_operator_runner_pools"][0][1]["token"] == SECRET
    assert ActionModule.finalize_task_arg("role", "gpu_operator", templar(), None) == "gpu_operator"


def test_another_arguments_failure_is_ansibles_own():
    with pytest.raises(AnsibleError, match="'nope' is undefined") as error:
        ActionModule.finalize_task_arg("gpu_classes", trust_as_template("{{ nope }}"), templar(), None)
    assert "cannot be resolved" not in str(error.value)


def test_only_names_the_expression_reads_are_walked_in_its_order():
    variables = {"a": 1, "b": 2, "default": 3}
    assert referenced_names("{{ {'x': b, 'y': a | default(b)} }}", variables) == ["b", "a", "default"]
    assert referenced_names(None, variables) == []


def fake_template(text):
    if "missing" in text:
        raise AnsibleError("'missing' is undefined")
    return text


@pytest.mark.parametrize("value, path", [
    ({"pools": [{"name": "a"}, {"name": "b", "keys": {"token": "{{ missing }}"}}]}, "v.pools[name=b].keys.token"),
    ([{"name": "{{ missing }}"}], "v[0].name"),  # a templated name cannot name its entry
    ([{"gpus": 1}, "{{ missing.x }}"], "v[1]"),
    ("{{ missing }}", "v"),
])
def test_the_first_failing_template_is_named_by_its_path(value, path):
    found = first_unresolved({"v": value}, ["v"], lambda text: "{{" in text, fake_template)
    assert found[0] == path and "'missing' is undefined" in str(found[1])


def test_values_that_template_are_none_of_its_business():
    assert first_unresolved({"v": [{"name": "a", "n": 1, "t": "{{ fine }}"}], "w": "plain"}, ["v", "w"],
                            lambda text: "{{" in text, fake_template) is None
