# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The base of the actions that run their module's code in the controller's process when it is the target.

k8s_reads does so to spare every converge a module's start-up; canary_gitlab_pipeline
to show its wait's progress while it waits (a module's output comes back only
when it ends). "The controller is the target" means what the module would see
there too: the connection is local, nothing is become, the task sets no
environment (clients read K8S_AUTH_* and similar variables), the target's
Python is the controller's, and the controller has the module's libraries.
Otherwise (ssh to a bastion, become, another interpreter) the module runs as usual.
"""

from __future__ import annotations

import os
import sys

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

display = Display()


def runs_in_controller(transport, become, environment, interpreter, controller_python=sys.executable):
    """Why the module must run instead (a sentence), or "" when its code can run here."""
    if transport != "local":
        return "the connection is %s, not local" % transport
    if become:
        return "the task becomes another user"
    # The task's environment comes as a list of mappings (the play's, the block's, its own), empty ones included.
    if any(environment or []):
        return "the task sets an environment"
    if not interpreter or os.path.realpath(interpreter) != os.path.realpath(controller_python):
        return "the target's Python (%s) is not the controller's (%s)" % (interpreter or "discovered", controller_python)
    return ""


class TargetIsControllerAction(ActionBase):
    """Subclasses set ``NAME``, ``ARGUMENT_SPEC`` and ``MISSING_HERE`` and give ``code_here``; ``answer`` may differ."""

    NAME = ""
    ARGUMENT_SPEC: dict = {}
    # Why the module runs when code_here finds no code: the library the controller lacks.
    MISSING_HERE = ""
    host = ""

    def code_here(self):
        """What answers in this process, or None where the controller lacks a library (the module may have it)."""
        raise NotImplementedError

    def answer(self, code, params):
        """The result of ``code`` for the validated ``params``."""
        return code(params)

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        interpreter = task_vars.get("ansible_python_interpreter")
        reason = runs_in_controller(self._connection.transport, self._play_context.become, self._task.environment,
                                    self._templar.template(interpreter) if interpreter else None)
        code = None if reason else self.code_here()
        if code is None:
            display.vvv("%s: the module runs, since %s" % (self.NAME, reason or self.MISSING_HERE))
            result.update(self._execute_module(task_vars=task_vars))
            return result
        display.vvv("%s: answered in the controller's process (its target is the controller)" % self.NAME)
        validated = ArgumentSpecValidator(self.ARGUMENT_SPEC).validate(self._task.args)
        if validated.error_messages:
            # The messages name the arguments, never their values.
            result.update(failed=True, msg="%s: %s" % (self.NAME, "; ".join(validated.error_messages)))
            return result
        self.host = task_vars.get("inventory_hostname", "")
        result.update(self.answer(code, validated.validated_parameters))
        return result
