# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether a cluster role's plan will be converged in its play, for role_plan's warning.

A present cluster role only plans; the role gpuci.runners.converge, later
in the same play, applies the plan. A play of the user's own that runs the
role without it would change nothing, silently. Ansible has no hook at the
end of a play that a role could use to notice, so the plan step looks at
the play instead: the roles it loaded (``roles:`` and ``import_role``) and
the ``include_role`` tasks it holds. An ``include_role`` inside a file that
``include_tasks`` brings in at run time is not visible yet; the warning's
wording allows for that.
"""

from __future__ import annotations

# The cluster roles that converge through it, listed once (the canary runs its own Jobs).
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.steps import ROLES as CLUSTER_ROLES

CONVERGE_ROLE = "gpuci.runners.converge"


def warning(role, state, run_tags, whole_role, play):
    """The warning for ``role``'s plan, or ``None``.

    None when the role removes (``state`` absent: removing is the role's
    own), when only its tasks file was included (``whole_role`` false:
    playbooks/plan.yml plans without converging), when the run asks only
    for preflight tags (``--tags <role>_preflight`` checks, on purpose), or
    when the play holds the converge.
    """
    if role not in CLUSTER_ROLES or state != "present" or not whole_role:
        return None
    tags = [tag for tag in run_tags or ["all"] if tag != "always"]
    if tags and all(tag.endswith("_preflight") for tag in tags):
        return None
    if play is None or play_converges(play):
        return None
    return ("%s only plans: no role %s was found in this play's roles or include_role tasks, so nothing of its plan "
            "will be applied. Run it after the cluster roles in the same play (roles/converge/README.md)."
            % (role, CONVERGE_ROLE))


def play_of(task):
    """The play a task belongs to, through its blocks and includes; None when it has none."""
    node = task
    while node is not None:
        play = getattr(node, "_play", None)
        if play is not None:
            return play
        node = getattr(node, "_parent", None)
    return None


def runs_whole(task):
    """False when the task's role was included for one tasks file only (``tasks_from``)."""
    role = getattr(task, "_role", None)
    return not (getattr(role, "_from_files", None) or {}).get("tasks")


def play_converges(play):
    """True when the play loaded the converge role, or holds an include_role of it."""
    # A loaded role's name is its FQCN, however the play wrote it.
    if any(role.get_name() == CONVERGE_ROLE for role in play.get_roles()):
        return True
    sections = (play.pre_tasks, play.tasks, play.post_tasks)
    return any(_includes_converge(entry) for section in sections for entry in section or [])


def _includes_converge(entry):
    """Walk a block (its block, rescue and always lists) or a task for an include_role of the converge."""
    for key in ("block", "rescue", "always"):
        for child in getattr(entry, key, None) or []:
            if _includes_converge(child):
                return True
    name = getattr(entry, "_role_name", None)
    return isinstance(name, str) and _is_converge(name, getattr(entry, "collections", None) or [])


def _is_converge(name, collections):
    """The role's name as the play wrote it: the FQCN, or ``converge`` with the collection in the play's ``collections``."""
    collection, short_name = CONVERGE_ROLE.rsplit(".", 1)
    return name == CONVERGE_ROLE or (name == short_name and collection in collections)
