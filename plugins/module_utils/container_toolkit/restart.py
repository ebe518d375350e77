# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether the container_toolkit role restarts the container runtime after nvidia-ctk changed its config.

Only a service manager that knows the service can restart it: a chroot, an
image build or a runtime outside systemd gets the reason instead, and so
does check mode, which restarts nothing.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import require_mapping


def container_toolkit_restart(value):
    """``{"restart": bool, "reason": str or None}`` for the handler.

    ``value``: ``restart_runtime`` (container_toolkit_restart_runtime),
    ``service_mgr`` (the host's fact), ``service`` (the runtime's service),
    ``service_known`` (whether systemd lists ``<service>.service``) and
    ``check_mode``. The reason says why there is no restart, None when there is one.
    """
    require_mapping(value, "container_toolkit_restart")
    if not value.get("restart_runtime"):
        reason = "container_toolkit_restart_runtime is false"
    elif value.get("service_mgr") != "systemd":
        reason = "the service manager is %s, not systemd" % value.get("service_mgr")
    elif not value.get("service_known"):
        reason = "systemd knows no %s.service" % value.get("service")
    elif value.get("check_mode"):
        reason = "check mode"
    else:
        reason = None
    return {"restart": reason is None, "reason": reason}
