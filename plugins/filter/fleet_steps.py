# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The fleet_steps filter; documentation in fleet_steps.yml, logic in module_utils/fleet/steps.py.

Whether the run selects a step is Ansible's own rule for a task with the
step's tags (``Taggable.evaluate_tags``, which --tags and --skip-tags apply
to every task), asked of a stand-in task: the converge's steps serve every
cluster role at once, so their own tags cannot tell one role from another.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError
from ansible.playbook.base import Base
from ansible.playbook.taggable import Taggable

from ansible_collections.gpuci.runners.plugins.module_utils.fleet.steps import fleet_steps
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError, plain


class _Tagged(Base, Taggable):
    """A task that is only its tags."""

    def __init__(self, tags):
        super().__init__()
        self.tags = list(tags)

    def _get_all_taggable_objects(self):
        return [self]


def selector(run_tags, skip_tags):
    """``selects(tags)``: whether Ansible runs a task tagged ``tags`` under ``--tags run_tags --skip-tags skip_tags``."""
    run_tags, skip_tags = set(run_tags or ["all"]), set(skip_tags or [])
    return lambda tags: _Tagged(tags).evaluate_tags(run_tags, skip_tags, {})


def steps(value):
    """``value``: ``plans``, ``tags``, ``run_tags`` (ansible_run_tags) and ``skip_tags`` (ansible_skip_tags)."""
    if not isinstance(value, dict) and not hasattr(value, "get"):
        raise AnsibleFilterError("gpuci.runners.fleet_steps: its input must be a mapping")
    try:
        return fleet_steps({"plans": value.get("plans"), "tags": plain(value.get("tags"))},
                           selector(plain(value.get("run_tags")), plain(value.get("skip_tags"))))
    except ValidationError as error:
        raise AnsibleFilterError("gpuci.runners.fleet_steps: %s" % (error,)) from error


class FilterModule(object):
    def filters(self):
        return {"fleet_steps": steps}
