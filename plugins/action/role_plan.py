# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of gpuci.runners.role_plan (documentation: plugins/modules/role_plan.py).

A role's plan and its refusal in one step. Each role used to plan in a
``set_fact`` task (its plan filter) and refuse in an ``assert`` task after
it; every task costs a worker process on every run, a rerun that changes
nothing included. Here the plan is made and refused in one, in the
controller's process (it reads only the inventory), by the role's builder
in module_utils/<role>/plan.py, whose input errors are reported as a
filter's are (plugin_utils/filter_errors.build).

The result is the plan itself, which the role's task registers as
``__<role>_plan``. Not ``ansible_facts``: Ansible keeps an action's facts in
its fact cache, which a jsonfile or redis cache, or AWX's fact storage,
writes out and brings back into the next run.
"""

from __future__ import annotations

from ansible.errors import AnsibleError
from ansible.utils.display import Display

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.plan import arc_runners_plan
from ansible_collections.gpuci.runners.plugins.module_utils.common.deprecations import DEPRECATED_VARIABLES, read_old_spellings
from ansible_collections.gpuci.runners.plugins.module_utils.common.url_credentials import carries_credentials
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.plan import canary_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import gitlab_runner_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.plan import gpu_operator_plan
from ansible_collections.gpuci.runners.plugins.plugin_utils.controller_action import ControllerAction
from ansible_collections.gpuci.runners.plugins.plugin_utils import converge_follows
from ansible_collections.gpuci.runners.plugins.plugin_utils.filter_errors import build
from ansible_collections.gpuci.runners.plugins.plugin_utils.unresolved_variables import (
    first_unresolved,
    referenced_names,
    unresolved_message,
)


display = Display()

# Per role: its plan builder, and how its problems are joined into one message.
ROLE_PLANS = {
    "gpu_operator": (gpu_operator_plan, " "),
    "gitlab_runner": (gitlab_runner_plan, "; "),
    "arc_runners": (arc_runners_plan, "; "),
    "gpu_canary": (canary_plan, "; "),
}


def role_plan(role, settings, gpu_classes=None, refuse=True, user_vars=None, defaults=None):
    """The action's result: the plan (with ``changed``), or ``failed`` and ``msg`` when it has problems.

    ``refuse`` false keeps the plan without refusing it (the GPU Operator's
    removal, which reads only its names). A plan's ``warnings`` (the GPU
    Operator's: chart values upstream removed) are the result's, so Ansible
    shows them as warnings. Old spellings still read (module_utils/common/deprecations.py:
    the role's deprecated variables found in ``user_vars``, its pools' deprecated keys)
    are read under their new names first, and each is a ``deprecations`` entry of the
    result, which Ansible shows as a deprecation warning naming the version that refuses it.
    """
    builder, separator = ROLE_PLANS[role]
    settings, gpu_classes, deprecations, old_problems = read_old_spellings(
        role, settings, user_vars or {}, defaults or {}, gpu_classes)
    plan = build(builder.__name__, builder, settings, gpu_classes)
    # Each problem once, however many checks met it (a role value several entries take).
    problems = list(dict.fromkeys(old_problems + (plan.get("problems") or [])))
    if refuse and problems:
        # The run stops here: the message is the whole answer, without the plan.
        return {"changed": False, "failed": True, "msg": separator.join(problems)}
    result = dict(plan, changed=False)
    if deprecations:
        result["deprecations"] = deprecations
    return result


def shown(result):
    """The plan as Ansible may show it: no_log when it carries a chart repository URL with credentials.

    The plan keeps the URL as written (helm_releases needs its user and
    password, and passes them to helm in a private file), so -v must not
    show the plan then. A refusal is left as it is: its messages mask URLs.
    """
    if result.get("failed") or not carries_credentials(result):
        return result
    return dict(result, _ansible_no_log=True)


ARGUMENT_SPEC = {
    "role": {"type": "str", "required": True, "choices": sorted(ROLE_PLANS)},
    "settings": {"type": "dict", "required": True},
    "gpu_classes": {"type": "dict", "default": {}},
    "refuse": {"type": "bool", "default": True},
}


class ActionModule(ControllerAction):
    NAME = "role_plan"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    @classmethod
    def finalize_task_arg(cls, name, value, templar, context):
        """Template ``settings`` as Ansible does; when it fails, name the inventory value that did
        (plugin_utils/unresolved_variables.py) instead of the argument (ansible-core 2.19's hook)."""
        try:
            return super().finalize_task_arg(name, value, templar, context)
        except AnsibleError:
            variables = templar.available_variables
            found = first_unresolved(variables, referenced_names(value, variables), templar.is_template,
                                     templar.template) if name == "settings" else None
            if found is None:
                raise
            path, cause = found
            raise AnsibleError(unresolved_message(path)) from cause

    def act(self, params):
        result = role_plan(params["role"], params["settings"], params["gpu_classes"], params["refuse"],
                           *self.old_spellings(params["role"]))
        # A present cluster role in a play without gpuci.runners.converge would change nothing, silently.
        unconverged = converge_follows.warning(
            params["role"], params["settings"].get(params["role"] + "_state"), self.task_vars.get("ansible_run_tags"),
            converge_follows.runs_whole(self._task), converge_follows.play_of(self._task))
        if unconverged and not result.get("failed"):
            result["warnings"] = list(result.get("warnings") or []) + [unconverged]
        # A plan's notes (ARC's: nothing of it declared) are shown without -v, the plan itself only with it.
        for note in result.get("notes") or []:
            display.display("%s (%s): %s" % (self.host, params["role"], note))
        return shown(result)

    def old_spellings(self, role):
        """(the role's deprecated variables the inventory sets, templated; the role's defaults)."""
        old = [name for name in DEPRECATED_VARIABLES.get(role, {}) if name in self.task_vars]
        if not old:
            return {}, {}
        # The role's defaults tell a new variable the inventory left alone from one it set.
        task_role = getattr(self._task, "_role", None)
        defaults = self._templar.template(task_role.get_default_vars()) if task_role else {}
        return {name: self._templar.template(self.task_vars[name]) for name in old}, defaults
