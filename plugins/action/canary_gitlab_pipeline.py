# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of gpuci.runners.canary_gitlab_pipeline: the wait's progress shown while it waits.

Why: a module's output comes back only when it ends, and the canary's
pipeline may wait minutes for runners. When the target is the controller
itself (as k8s_reads' action decides: local connection, no become, no task
environment, the controller's Python), the same code
(module_utils/canary_gitlab_pipeline.py) runs here and prints each progress
line as it happens; anywhere else the module runs and returns them.

The token never reaches the display: the progress lines and the result are
scrubbed of it by run_module, and the task's arguments are not echoed.
"""

from __future__ import annotations

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.gpuci.runners.plugins.action.k8s_reads import runs_in_controller
from ansible_collections.gpuci.runners.plugins.module_utils.canary_gitlab_pipeline import ARGUMENT_SPEC

display = Display()


class ActionModule(ActionBase):
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)
    _supports_check_mode = True

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        interpreter = task_vars.get("ansible_python_interpreter")
        reason = runs_in_controller(self._connection.transport, self._play_context.become, self._task.environment,
                                    self._templar.template(interpreter) if interpreter else None)
        run_module = None if reason else _code_here()
        if run_module is None:
            display.vvv("canary_gitlab_pipeline: the module runs, since %s" % (reason or "python-gitlab is missing here"))
            result.update(self._execute_module(task_vars=task_vars))
            return result
        validated = ArgumentSpecValidator(ARGUMENT_SPEC).validate(self._task.args)
        if validated.error_messages:
            # The messages name the arguments, never their values.
            result.update(failed=True, msg="canary_gitlab_pipeline: " + "; ".join(validated.error_messages))
            return result
        host = task_vars.get("inventory_hostname", "")
        answer = run_module(validated.validated_parameters,
                            lambda line: display.display("%s (gitlab canary): %s" % (host, line)),
                            bool(self._play_context.check_mode))
        if not self._play_context.diff:
            answer.pop("diff", None)
        result.update(answer)
        return result


def _code_here():
    """run_module, or None where the controller's Python lacks python-gitlab (the module may have it)."""
    try:
        from ansible_collections.gpuci.runners.plugins.module_utils.canary_gitlab_pipeline import (  # pylint: disable=import-outside-toplevel
            HAS_GITLAB,
            run_module,
        )
    except ImportError:
        return None
    return run_module if HAS_GITLAB else None
