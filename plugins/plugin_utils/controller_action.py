# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The base of the collection's actions that only compute, in the controller's process (role_plan, fleet_decide).

They touch no host: no connection, no file transfer, the same in check
mode. Each validates its arguments against its spec, then acts; an error
becomes the task's failure, named after the action.
"""

from __future__ import annotations

from ansible.errors import AnsibleError
from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase


class ControllerAction(ActionBase):
    """Subclasses set ``NAME`` and ``ARGUMENT_SPEC`` and return their result from ``act``."""

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    NAME = ""
    ARGUMENT_SPEC: dict = {}
    host = ""
    task_vars: dict = {}

    def act(self, params):
        """The result for the validated ``params``; raises AnsibleError to fail. ``self.host`` names the host, ``self.task_vars`` holds the task's variables."""
        raise NotImplementedError

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        self.task_vars = task_vars or {}
        self.host = self.task_vars.get("inventory_hostname", "")
        validated = ArgumentSpecValidator(self.ARGUMENT_SPEC).validate(self._task.args)
        if validated.error_messages:
            # The messages name the arguments, never their values (which may hold Secrets).
            result.update(failed=True, msg="%s: %s" % (self.NAME, "; ".join(validated.error_messages)))
            return result
        try:
            result.update(self.act(validated.validated_parameters))
        except AnsibleError as error:
            result.update(failed=True, msg=str(error))
        return result
