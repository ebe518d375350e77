# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ansible_core_requirement: the running ansible-core against meta/runtime.yml's requires_ansible."""
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError
from ansible.release import __version__

from ansible_collections.gpuci.runners.plugins.filter.ansible_core_requirement import FilterModule
from ansible_collections.gpuci.runners.plugins.module_utils.common.ansible_core_requirement import ansible_core_requirement

RUNTIME = Path(__file__).resolve().parents[5] / "meta" / "runtime.yml"


@pytest.mark.parametrize("required, running, met", [
    (">=2.19.0", "2.19.14", True),
    (">=2.19.0", "2.19", True),
    (">=2.19.0", "2.18.9", False),
    (">=2.19.0,<2.21", "2.20.1", True),
    (">=2.19.0,<2.21", "2.21.0", False),
    (">=2.19.0, != 2.19.3", "2.19.3", False),
    (">2.19", "2.19.0", False),
    ("==2.19.14", "2.19.14.post1", True),
    (">=2.20.0", "2.20.0rc1", True),
])
def test_each_clause_is_checked(required, running, met):
    result = ansible_core_requirement({"requires_ansible": required, "running": running})
    assert (result["problem"] == "") is met
    if not met:
        assert result["problem"] == "gpuci.runners needs ansible-core %s; this controller runs %s." % (required, running)


def test_the_collections_own_requirement_is_readable_and_met_here():
    requires = yaml.safe_load(RUNTIME.read_text())["requires_ansible"]
    assert ansible_core_requirement({"requires_ansible": requires, "running": __version__})["problem"] == ""


@pytest.mark.parametrize("spec, message", [
    ({"running": "2.19.0"}, "requires_ansible: meta/runtime.yml must name"),
    ({"requires_ansible": "~=2.19", "running": "2.19.0"}, "requires_ansible: each clause must be an operator"),
    ({"requires_ansible": ">=2.19", "running": "devel"}, "running: is not a version (got 'devel')"),
    ("2.19", "ansible_core_requirement: must be a mapping"),
])
def test_unreadable_input_fails_naming_the_field(spec, message):
    with pytest.raises(AnsibleFilterError, match=r"^gpuci\.runners\.ansible_core_requirement: ") as error:
        FilterModule().filters()["ansible_core_requirement"](spec)
    assert message in str(error.value)
