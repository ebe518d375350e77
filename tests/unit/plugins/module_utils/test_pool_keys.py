# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The choices the argument specs offer for a pool's or scale set's fields are the ones the Python checks accept."""

from pathlib import Path

import pytest
import yaml

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_classes import GPU_ACCESS_MODES
from ansible_collections.gpuci.runners.plugins.module_utils.pool_keys import ARC_CONTAINER_MODES, ENTRY_STATES

ROLES = Path(__file__).resolve().parents[4] / "roles"
ENTRIES = {"gitlab_runner": "gitlab_runner_pools", "arc_runners": "arc_runners_scale_sets"}
CHOICES = {"state": ENTRY_STATES, "gpu_access": GPU_ACCESS_MODES, "lane": GPU_ACCESS_MODES,
           "container_mode": ARC_CONTAINER_MODES}


def entry_choices(role):
    spec = yaml.safe_load((ROLES / role / "meta" / "argument_specs.yml").read_text())["argument_specs"]["main"]
    fields = spec["options"][ENTRIES[role]]["options"]
    return {name: field["choices"] for name, field in fields.items() if "choices" in field}


@pytest.mark.parametrize("role", sorted(ENTRIES))
def test_every_choice_of_an_entry_is_the_pythons(role):
    offered = entry_choices(role)
    assert offered, "%s offers no choices: the test reads the wrong place" % role
    for name, values in offered.items():
        assert tuple(values) == CHOICES[name], "%s: %s" % (ENTRIES[role], name)


def test_only_scale_sets_have_a_container_mode():
    assert "container_mode" in entry_choices("arc_runners") and "container_mode" not in entry_choices("gitlab_runner")
