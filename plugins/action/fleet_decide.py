# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of gpuci.runners.fleet_decide (documentation: plugins/modules/fleet_decide.py).

The cluster roles' decisions after their one read (module_utils/fleet/decide.py)
in one step, in the controller's process: the converge (role
gpuci.runners.converge) calls it once for every role it converges. One step
instead of one per role: each task is a worker process on every run, a rerun
that changes nothing included.

The result is what the converge changes, which its task registers as
``__converge_changes``. It holds the token and credentials Secrets:

- it is marked no_log (``_ansible_no_log``: Ansible then shows none of it,
  at any verbosity), while a refusal, which holds no secret, is shown: a
  task-level ``no_log`` would hide it too;
- it is not ``ansible_facts``, which Ansible keeps in its fact cache: a
  jsonfile or redis cache, or AWX's fact storage, would write the Secrets
  out (AWX into its database, shown with the host's facts) and bring a
  stale decision back into the next run. A registered result lives in the
  run's memory only.
"""

from __future__ import annotations

from ansible.errors import AnsibleError

from ansible_collections.gpuci.runners.plugins.module_utils.fleet.decide import fleet_decide
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError, plain
from ansible_collections.gpuci.runners.plugins.plugin_utils.controller_action import ControllerAction

ARGUMENT_SPEC = {
    "roles": {"type": "dict", "required": True},
    "read": {"type": "dict", "required": True},
    "steps": {"type": "dict"},
}


def decision(params, check_mode):
    """The action's result: the decision (no_log), or ``failed`` with the refusals."""
    try:
        made, refusals = fleet_decide(plain(params["roles"]), plain(params["read"]), steps=plain(params.get("steps")),
                                      check_mode=check_mode)
    except (ValidationError, KeyError, TypeError) as error:
        # The inputs are the roles' own plans and reads: a slip here is ours, never the inventory's.
        raise AnsibleError("fleet_decide: %s" % (error,)) from error
    if refusals:
        return {"changed": False, "failed": True, "msg": " ".join(refusals)}
    return dict(made, changed=False, _ansible_no_log=True)


class ActionModule(ControllerAction):
    NAME = "fleet_decide"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def act(self, params):
        return decision(params, bool(self._play_context.check_mode))
