# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of gpuci.runners.known_variables (documentation: plugins/modules/known_variables.py).

The shared preflight's refusal of misspelt variables (module_utils/common/known_variables.py),
in the controller's process. It reads:

- the host's variables as this task sees them (inventory, facts, extra vars),
  by name only: no value is templated, so a value that would fail to
  template (a lookup of a missing file) or that holds a secret is never
  touched;
- the argument specs of the roles of the installed collection this plugin
  belongs to (``roles/*/meta/argument_specs.yml`` beside ``plugins/``), at
  run time: the one source of the roles' variable names.
"""

from __future__ import annotations

import os

import yaml

from ansible.errors import AnsibleError

from ansible_collections.gpuci.runners.plugins.module_utils.common import known_variables
from ansible_collections.gpuci.runners.plugins.plugin_utils.controller_action import ControllerAction

# plugins/action/known_variables.py -> the collection's root.
COLLECTION_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ARGUMENT_SPEC = {
    "unchecked": {"type": "list", "elements": "str", "default": []},
}

_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def role_specs(root=COLLECTION_ROOT):
    """``{role: parsed meta/argument_specs.yml}`` of the collection under ``root``; fails when it finds none,
    which would make every role variable unknown."""
    roles = os.path.join(root, "roles")
    specs = {}
    for role in sorted(os.listdir(roles)) if os.path.isdir(roles) else []:
        path = os.path.join(roles, role, "meta", "argument_specs.yml")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as handle:
                specs[role] = yaml.load(handle, Loader=_LOADER)  # noqa: S506 - a safe loader
    if not specs:
        raise AnsibleError("known_variables: no role argument specs under %s" % roles)
    return specs


def origin_of(name, task_vars):
    """Where Ansible read the variable ``name`` from ('path:line:column', '<CLI option '-e'>'), or ''.

    ansible-core 2.19 tags what it loads with its origin; the tag is its own
    (``ansible._internal``), read here only to point at the line, and left
    out when another core does not offer it."""
    try:
        from ansible._internal._datatag._tags import Origin
    except ImportError:
        return ""
    for key in task_vars:
        if key == name:
            origin = Origin.get_tag(key) or Origin.get_tag(task_vars[key])
            return str(origin) if origin else ""
    return ""


def check(names, task_vars, unchecked, specs):
    """The action's result for the variable ``names``: ``failed`` with the refusal, or the count checked."""
    unknown = known_variables.unknown_variables(names, specs, unchecked)
    if unknown:
        origins = dict((name, origin_of(name, task_vars)) for name, _suggestion in unknown)
        return {"changed": False, "failed": True, "msg": known_variables.refusal(unknown, origins),
                "unknown": [name for name, _suggestion in unknown]}
    return {"changed": False, "checked": len([name for name in names if known_variables.carries_prefix(name)])}


class ActionModule(ControllerAction):
    NAME = "known_variables"
    ARGUMENT_SPEC = ARGUMENT_SPEC

    def act(self, params):
        return check(list(self.task_vars), self.task_vars, params["unchecked"], role_specs())
