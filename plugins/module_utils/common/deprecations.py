# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Old spellings that still work, with a deprecation warning, until the release that refuses them.

The policy is docs/deprecation.md. A role variable, a pool (or scale set)
key or a GPU class key that is renamed keeps working for at least one minor release: the
tables below map its old name to the new one and to the version that
refuses it. ``gpuci.runners.role_plan`` reads the old spelling into the new
one before the plan is made, and returns a deprecation for each, which
Ansible shows as ``[DEPRECATION WARNING]`` naming the collection and the
version. At that version the entry moves from here to the refusal tables
(``pool_keys.RENAMED_POOL_KEYS``, ``gpu.classes.RENAMED_CLASS_KEYS``), whose error names the new
spelling; a unit test (tests/unit/test_deprecation_policy.py) fails while
an entry's version is reached and it is still here, and when an entry has
no ``deprecated_features`` changelog entry.

Why not ``deprecated_aliases`` in the argument specs: Ansible's role
argument validation checks aliases but neither shows their deprecations
nor hands the value to the role under its new name
(``validate_argument_spec`` returns only errors), so a role would read
nothing and warn nothing. The old spelling is documented in the role's
argument spec (``removed_in_version``, ``removed_from_collection``), the
test keeps the two in step.
"""

from __future__ import annotations

from collections import namedtuple

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import child, named_item, problem

COLLECTION = "gpuci.runners"

# A deprecated spelling: what to write instead, and the collection version that refuses the old one.
Deprecation = namedtuple("Deprecation", ["new", "removed_in"])

# Per role, its variables read under an old name: {role: {old variable: Deprecation}}. None today.
DEPRECATED_VARIABLES: dict[str, dict[str, Deprecation]] = {
    "gpu_operator": {},
    "gitlab_runner": {},
    "arc_runners": {},
    "gpu_canary": {},
}

# Keys of a GitLab pool or ARC scale set read under an old name: {old key: Deprecation}. None today.
DEPRECATED_POOL_KEYS: dict[str, Deprecation] = {}

# Keys of a GPU class of the inventory's gpu_classes read under an old name: {old key: Deprecation}. None today.
DEPRECATED_CLASS_KEYS: dict[str, Deprecation] = {}

# The settings of each role that hold pools or scale sets. The canary reads the runner roles' lists too,
# and its own copies of them (by default the same lists).
POOL_VARIABLES = {
    "gitlab_runner": ("gitlab_runner_pools",),
    "arc_runners": ("arc_runners_scale_sets",),
    "gpu_canary": ("gitlab_runner_pools", "arc_runners_scale_sets", "gpu_canary_gitlab_pools",
                   "gpu_canary_arc_scale_sets"),
}


def deprecation(old_path: str, new_path: str, removed_in: str) -> dict:
    """One deprecation as Ansible takes it in a task result (``deprecations``)."""
    return {"msg": "%s is deprecated: write %s instead (same values); %s %s refuses %s"
                   % (old_path, new_path, COLLECTION, removed_in, old_path),
            "version": removed_in, "collection_name": COLLECTION}


def renamed_pool_keys(entries, path: str, table=None) -> tuple[list, list[dict], list[str]]:
    """``(entries, deprecations, problems)``: each entry with its deprecated keys under their new names.

    ``entries`` are the inventory's pools or scale sets (anything else is
    returned as it is, for the plan to refuse). An entry that sets both the
    old and the new key is a problem naming both, so neither wins silently.
    Entries without an old key are returned unchanged, not copied.
    """
    table = DEPRECATED_POOL_KEYS if table is None else table
    if not isinstance(entries, list):
        return entries, [], []
    renamed, deprecations, problems = [], [], []
    for index, entry in enumerate(entries):
        entry, more, more_problems = _renamed_keys(entry, named_item(path, entry, index), table)
        renamed.append(entry)
        deprecations += more
        problems += more_problems
    return renamed, deprecations, problems


def renamed_class_keys(classes, table=None) -> tuple[dict, list[dict], list[str]]:
    """``(classes, deprecations, problems)``: the inventory's ``gpu_classes`` with deprecated keys renamed."""
    table = DEPRECATED_CLASS_KEYS if table is None else table
    if not isinstance(classes, dict):
        return classes, [], []
    renamed, deprecations, problems = {}, [], []
    for name, entry in classes.items():
        renamed[name], more, more_problems = _renamed_keys(entry, child("gpu_classes", name), table)
        deprecations += more
        problems += more_problems
    return renamed, deprecations, problems


def _renamed_keys(entry, entry_path: str, table) -> tuple[object, list[dict], list[str]]:
    """One pool, scale set or class with its old keys under their new names (itself when it has none)."""
    old_keys = [key for key in table if isinstance(entry, dict) and key in entry]
    if not old_keys:
        return entry, [], []
    entry, deprecations, problems = dict(entry), [], []
    for old in old_keys:
        new, removed_in = table[old]
        if new in entry:
            problems.append(problem(child(entry_path, old), "is the deprecated spelling of %s, which is set "
                                    "too; remove %s" % (child(entry_path, new), old)))
            continue
        entry[new] = entry.pop(old)
        deprecations.append(deprecation(child(entry_path, old), child(entry_path, new), removed_in))
    return entry, deprecations, problems


def renamed_variables(role: str, settings: dict, user_vars: dict, defaults: dict, table=None):
    """``(settings, deprecations, problems)``: the role's settings with its deprecated variables read.

    ``user_vars`` holds the old variables the inventory sets (only those),
    ``defaults`` the role's defaults. The old value is used when the new
    variable still has its default; when both are set, it is a problem
    naming both.
    """
    table = DEPRECATED_VARIABLES.get(role, {}) if table is None else table
    settings, deprecations, problems = dict(settings), [], []
    for old, (new, removed_in) in sorted(table.items()):
        if old not in user_vars:
            continue
        if new in settings and new in defaults and settings[new] != defaults[new]:
            problems.append(problem(old, "is the deprecated spelling of %s, which is set too; remove %s" % (new, old)))
            continue
        settings[new] = user_vars[old]
        deprecations.append(deprecation(old, new, removed_in))
    return settings, deprecations, problems


def read_old_spellings(role: str, settings: dict, user_vars: dict, defaults: dict, gpu_classes=None):
    """``(settings, gpu_classes, deprecations, problems)``: the role's deprecated variables, its pools' and
    the GPU classes' deprecated keys, read under their new names."""
    settings, deprecations, problems = renamed_variables(role, settings, user_vars, defaults)
    done = []  # (a list as the inventory wrote it, the same renamed): a copy of a list is not reported twice
    for variable in POOL_VARIABLES.get(role, ()):
        if variable not in settings:
            continue
        original = settings[variable]
        seen = [renamed for before, renamed in done if before == original]
        if seen:
            settings[variable] = seen[0]
            continue
        settings[variable], more, key_problems = renamed_pool_keys(original, variable)
        done.append((original, settings[variable]))
        deprecations += more
        problems += key_problems
    gpu_classes, more, class_problems = renamed_class_keys(gpu_classes)
    return settings, gpu_classes, deprecations + more, problems + class_problems
