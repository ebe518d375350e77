# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which GPU hosts manage their container toolkit on the host (module_utils/gpu_operator/host_toolkits.py)."""
from ansible_collections.gpuci.runners.plugins.filter.gpu_operator_host_toolkits import FilterModule

HOSTVARS = {
    "pinned": {"container_toolkit_version": "1.17.8-1"},
    "pinned-present": {"container_toolkit_version": "1.17.8-1", "container_toolkit_state": "present"},
    "removing": {"container_toolkit_version": "1.17.8-1", "container_toolkit_state": "absent"},
    "operator-toolkit": {},
    "elsewhere": {"container_toolkit_version": "1.17.8-1"},
}


def test_hosts_with_a_version_that_keep_the_toolkit():
    host_toolkits = FilterModule().filters()["gpu_operator_host_toolkits"]
    names = ["pinned", "pinned-present", "removing", "operator-toolkit"]
    assert host_toolkits(HOSTVARS, names) == ["pinned", "pinned-present"]
    assert host_toolkits(HOSTVARS, []) == []
