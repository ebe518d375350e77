# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of gpuci.runners.k8s_reads: the reads in the controller's process when it is the target.

Why: every run of site.yml, a no-op included, starts with one k8s_reads
task. As a module it costs the AnsiballZ payload (built by scanning every
module_utils file that kubernetes.core's client imports), a new Python, the
client's imports from that payload, and the temporary files: about 0.4 s of
a 2.1 s no-op on a 2-core controller. When the target is the controller
itself, the same code (module_utils/k8s_reads_client.py) answers the same
reads in this process instead.

"The controller itself" means what the module would see there, too: the
connection is local, nothing is become, the task sets no environment (the
client reads K8S_AUTH_* variables), the target's Python is the controller's
and the controller has the Kubernetes client. Otherwise (ssh to a bastion,
become, another interpreter) the module runs as usual.
"""

from __future__ import annotations

import os
import sys

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.gpuci.runners.plugins.module_utils.k8s_reads import ARGUMENT_SPEC

display = Display()


def runs_in_controller(transport, become, environment, interpreter, controller_python=sys.executable):
    """Why the module must run instead (a sentence), or "" when the reads can be answered here."""
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


class ActionModule(ActionBase):
    _VALID_ARGS = frozenset(ARGUMENT_SPEC)

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        interpreter = task_vars.get("ansible_python_interpreter")
        reason = runs_in_controller(self._connection.transport, self._play_context.become, self._task.environment,
                                    self._templar.template(interpreter) if interpreter else None)
        answer_reads = None if reason else _client_here()
        if answer_reads is None:
            display.vvv("k8s_reads: the module runs, since %s" % (reason or "the controller lacks the Kubernetes client"))
            result.update(self._execute_module(task_vars=task_vars))
            return result
        display.vvv("k8s_reads: answered in the controller's process (its target is the controller)")
        validated = ArgumentSpecValidator(ARGUMENT_SPEC).validate(self._task.args)
        if validated.error_messages:
            result.update(failed=True, msg="k8s_reads: " + "; ".join(validated.error_messages))
            return result
        result.update(answer_reads(validated.validated_parameters))
        return result


def _client_here():
    """answer_reads, or None where the controller's Python lacks the Kubernetes client (the module may have it)."""
    try:
        from ansible_collections.gpuci.runners.plugins.module_utils.k8s_reads_client import (  # pylint: disable=import-outside-toplevel
            answer_reads,
        )
    except ImportError:
        return None
    return answer_reads
