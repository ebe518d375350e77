# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The choices the argument specs document for a pool's or scale set's fields are the ones the Python checks accept.

The keys of one pool (scale set) are documented in their own entry point of
the role's specs (``pool``, ``scale_set``), which argument validation never
runs: the preflight checks them, naming the entry as the inventory does."""

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import GPU_ACCESS_MODES
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import GPU_ALLOCATIONS
from ansible_collections.gpuci.runners.plugins.module_utils.common.pool_keys import (
    ARC_CONTAINER_MODES,
    ENTRY_STATES,
    GITLAB_HPA_KEYS,
    GITLAB_RESOURCE_KEYS,
)

ENTRIES = {"gitlab_runner": ("gitlab_runner_pools", "pool"), "arc_runners": ("arc_runners_scale_sets", "scale_set")}
CHOICES = {"state": ENTRY_STATES, "gpu_access": GPU_ACCESS_MODES, "gpu_allocation": GPU_ALLOCATIONS, "lane": GPU_ACCESS_MODES,
           "container_mode": ARC_CONTAINER_MODES}


def entry_choices(role_options, role):
    """The choices the role's argument specs document for the fields of one of its pools or scale sets."""
    fields = role_options(role, ENTRIES[role][1])
    return {name: field["choices"] for name, field in fields.items() if "choices" in field}


@pytest.mark.parametrize("role", sorted(ENTRIES))
def test_every_choice_of_an_entry_is_the_pythons(role, role_options):
    offered = entry_choices(role_options, role)
    assert offered, "%s offers no choices: the test reads the wrong place" % role
    for name, values in offered.items():
        assert tuple(values) == CHOICES[name], "%s: %s" % (ENTRIES[role][0], name)


@pytest.mark.parametrize("role", sorted(ENTRIES))
def test_argument_validation_leaves_the_entries_keys_to_the_preflight(role, role_options):
    """One style for every error about a pool: Ansible's validation would name none ("found in gitlab_runner_pools")."""
    variable = role_options(role)[ENTRIES[role][0]]
    assert (variable["type"], variable["elements"]) == ("list", "dict") and "options" not in variable


def test_only_scale_sets_have_a_container_mode(role_options):
    assert "container_mode" in entry_choices(role_options, "arc_runners")
    assert "container_mode" not in entry_choices(role_options, "gitlab_runner")


@pytest.mark.parametrize("key, keys", [("hpa", GITLAB_HPA_KEYS), ("resources", GITLAB_RESOURCE_KEYS)])
def test_a_pools_nested_keys_are_the_ones_the_preflight_takes(role_options, key, keys):
    assert sorted(role_options("gitlab_runner", "pool")[key]["options"]) == sorted(keys)
