# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GPU hosts of a cluster whose container toolkit is managed on the host.

The gpu_operator role refuses to run the operator's own toolkit on a
cluster whose GPU hosts get the host toolkit (roles/container_toolkit): a host
is one when its variables give ``container_toolkit_version`` and do not
remove the toolkit (``container_toolkit_state`` unset or ``present``).
"""

from __future__ import annotations


def gpu_operator_host_toolkits(hostvars, names):
    """The names of ``names`` (the host group's) whose variables in ``hostvars`` manage the toolkit on the host."""
    managed = []
    for name in names or []:
        host = hostvars[name]
        if "container_toolkit_version" in host and host.get("container_toolkit_state", "present") == "present":
            managed.append(name)
    return managed
