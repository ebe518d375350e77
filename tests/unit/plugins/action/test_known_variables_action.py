# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""known_variables (plugins/action/known_variables.py): the preflight's refusal of misspelt variables, from the
installed collection's argument specs and the host's variables by name, pointing at the line that set them."""
from pathlib import Path

import pytest
from ansible.errors import AnsibleError
from ansible.parsing.dataloader import DataLoader

from ansible_collections.gpuci.runners.plugins.action import known_variables as action
from ansible_collections.gpuci.runners.plugins.action.known_variables import check, origin_of, role_specs

REPO = Path(__file__).resolve().parents[4]


class Untouchable:
    """A value the check must never template or read."""

    def __getattr__(self, name):
        raise AssertionError("the value was read: %s" % name)


def test_the_specs_are_read_from_the_collection_the_plugin_belongs_to():
    assert Path(action.COLLECTION_ROOT).resolve() == REPO.resolve()
    specs = role_specs()
    assert set(specs) >= {"gitlab_runner", "arc_runners", "gpu_operator", "container_toolkit", "gpu_canary"}
    assert "gitlab_runner_pools" in specs["gitlab_runner"]["argument_specs"]["main"]["options"]


def test_a_collection_without_specs_fails_instead_of_refusing_every_variable(tmp_path):
    (tmp_path / "roles").mkdir()
    with pytest.raises(AnsibleError, match="no role argument specs"):
        role_specs(str(tmp_path))


def test_a_misspelt_inventory_variable_is_refused_with_its_file_and_line():
    task_vars = DataLoader().load("gitlab_runner_pool:\n  - name: l40s\ngitlab_runner_fleet: ci\n",
                                  file_name="/inv/group_vars/all/gitlab_runner.yml")
    task_vars.update({"inventory_hostname": "cluster", "ansible_connection": "local"})
    result = check(list(task_vars), task_vars, [], role_specs())
    assert result["failed"] is True and result["unknown"] == ["gitlab_runner_pool"]
    assert result["msg"].startswith("gitlab_runner_pool: unknown variable; did you mean gitlab_runner_pools? "
                                    "(set in /inv/group_vars/all/gitlab_runner.yml:1:1)")


def test_known_variables_pass_and_values_are_never_read():
    task_vars = {"gitlab_runner_pools": Untouchable(), "gpuci_kubeconfig": Untouchable(),
                 "gpuci_testbed_gitlab_url": Untouchable(), "ansible_host": Untouchable()}
    assert check(list(task_vars), task_vars, [], role_specs()) == {"changed": False, "checked": 3}


def test_unchecked_names_of_the_users_own_pass():
    task_vars = {"gitlab_runner_coordinator_url": "https://gitlab.example.com"}
    assert "failed" not in check(list(task_vars), task_vars, ["gitlab_runner_coordinator_*"], role_specs())
    assert check(list(task_vars), task_vars, [], role_specs())["failed"] is True


def test_a_name_ansible_did_not_tag_has_no_origin():
    assert origin_of("gitlab_runner_pool", {"gitlab_runner_pool": []}) == ""
