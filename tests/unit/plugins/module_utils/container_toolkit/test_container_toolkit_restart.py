# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""When the container_toolkit role restarts the container runtime, and what it says when it does not."""

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.container_toolkit.restart import container_toolkit_restart

SYSTEMD = {"restart_runtime": True, "service_mgr": "systemd", "service": "containerd", "service_known": True,
           "check_mode": False}


def test_systemd_that_knows_the_service_restarts_it():
    assert container_toolkit_restart(SYSTEMD) == {"restart": True, "reason": None}


@pytest.mark.parametrize("overrides, reason", [
    ({"restart_runtime": False, "service_mgr": "sysvinit"}, "container_toolkit_restart_runtime is false"),
    ({"service_mgr": "sysvinit", "service_known": False}, "the service manager is sysvinit, not systemd"),
    ({"service_known": False, "check_mode": True}, "systemd knows no containerd.service"),
    ({"check_mode": True}, "check mode"),
])
def test_no_restart_and_the_first_reason(overrides, reason):
    assert container_toolkit_restart(dict(SYSTEMD, **overrides)) == {"restart": False, "reason": reason}
