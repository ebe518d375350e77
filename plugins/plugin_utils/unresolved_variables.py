# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which inventory value failed to template, named by the path the user wrote.

When a task argument such as role_plan's ``settings`` (every role variable
and the runner roles' pools at once) fails to template, Ansible blames the
argument: "Error while resolving value for 'settings': object of type 'dict'
has no attribute 'l40S'", under whichever role's task came first (the GPU
Operator's, which reads the pools too). The user wrote
``token: "{{ vault_gitlab_runner_tokens['l40S'] }}"`` in one pool. Here each
variable the argument names is walked as the inventory holds it, each
template in it templated alone, and the first that fails is named:
``gitlab_runner_pools[name=l40s].token``.

Only after the argument has failed, so a run that templates cleanly pays
nothing. Templating a value again is what Ansible was about to do anyway.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from ansible.errors import AnsibleError

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import child, named_item

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def referenced_names(expression, variables):
    """The names in the template text ``expression`` that are variables, in order, once each."""
    if not isinstance(expression, str):
        return []
    return [name for name in dict.fromkeys(_NAME.findall(expression)) if name in variables]


def first_unresolved(variables, names, is_template, template):
    """``(path, error)`` of the first template in the variables ``names`` that ``template`` cannot resolve,
    or None when each resolves.

    ``variables`` holds the values as loaded (templates unrendered), ``is_template(text)`` says whether a
    string is one, ``template(text)`` renders it or raises an AnsibleError. Lists of mappings are named by their entries'
    names, as the roles' errors name them (``gitlab_runner_pools[name=l40s]``).
    """
    for name in names:
        found = _walk(variables[name], name, is_template, template)
        if found:
            return found
    return None


def _walk(value, path, is_template, template):
    if isinstance(value, Mapping):
        entries = [(child(path, key), element) for key, element in value.items()]
    elif isinstance(value, (list, tuple)):
        entries = [(named_item(path, _named_by(element, is_template), index), element)
                   for index, element in enumerate(value)]
    elif isinstance(value, str) and is_template(value):
        try:
            template(value)
        except AnsibleError as error:  # Ansible's template errors (undefined, filter, syntax) all are
            return path, error
        return None
    else:
        return None
    for entry_path, element in entries:
        found = _walk(element, entry_path, is_template, template)
        if found:
            return found
    return None


def _named_by(entry, is_template):
    """``entry`` when its name is plain text, else None (its index names it: ``[name={{ x }}]`` helps nobody)."""
    name = entry.get("name") if isinstance(entry, Mapping) else None
    return None if isinstance(name, str) and is_template(name) else entry


def unresolved_message(path):
    """The refusal, the user's path first. Raised ``from`` the template's own error, which Ansible appends
    (its words name the missing key or variable) and whose origin points at the inventory's line."""
    return "%s: cannot be resolved; check the variable or vault key it names" % path
