# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The rule of role_plan's warning.

The plays here are small objects with the attributes the rule reads
(Ansible's own Play cannot load tasks under the unit tests' collection
loader); tests/roles/test_converge_reminder.py runs the same cases through
ansible-playbook on real plays.
"""
from __future__ import annotations

import pytest

from ansible_collections.gpuci.runners.plugins.plugin_utils import converge_follows


class Role:
    def __init__(self, name, from_files=None):
        self.name, self._from_files = name, from_files or {}

    def get_name(self):
        return self.name


class Task:
    def __init__(self, role_name=None, collections=None, parent=None, role=None):
        self._role_name, self.collections, self._parent, self._role = role_name, collections, parent, role


class Block:
    def __init__(self, block=(), rescue=(), always=(), play=None):
        self.block, self.rescue, self.always, self._play, self._parent = list(block), list(rescue), list(always), play, None


class Play:
    def __init__(self, roles=(), tasks=(), pre_tasks=(), post_tasks=()):
        self.roles, self.tasks, self.pre_tasks, self.post_tasks = list(roles), list(tasks), list(pre_tasks), list(post_tasks)

    def get_roles(self):
        return self.roles


CONVERGE = "gpuci.runners.converge"


@pytest.mark.parametrize("play, found", [
    (Play(roles=[Role("gpuci.runners.gitlab_runner"), Role(CONVERGE)]), True),
    (Play(tasks=[Block([Task(CONVERGE)])]), True),
    (Play(post_tasks=[Block([Task("x")], always=[Block([Task(CONVERGE)])])]), True),
    (Play(tasks=[Block([Task("converge", ["gpuci.runners"])])]), True),
    (Play(tasks=[Block([Task("converge")])]), False),
    (Play(tasks=[Block([Task("someone.else.converge")])]), False),
    (Play(roles=[Role("gpuci.runners.gitlab_runner")], tasks=[Block([Task()])]), False),
])
def test_play_converges(play, found):
    assert converge_follows.play_converges(play) is found


def test_play_of_walks_up_through_blocks():
    play = Play()
    outer = Block(play=play)
    inner = Block()
    inner._parent = outer
    assert converge_follows.play_of(Task(parent=inner)) is play
    assert converge_follows.play_of(Task()) is None


def test_runs_whole_reads_tasks_from():
    assert converge_follows.runs_whole(Task(role=Role("r")))
    assert not converge_follows.runs_whole(Task(role=Role("r", {"tasks": "preflight.yml"})))


WITHOUT = Play(roles=[Role("gpuci.runners.gitlab_runner")])
WITH = Play(roles=[Role("gpuci.runners.gitlab_runner"), Role(CONVERGE)])


@pytest.mark.parametrize("role, state, run_tags, whole, play, warns", [
    ("gitlab_runner", "present", ["all"], True, WITHOUT, True),
    ("arc_runners", "present", ["arc_runners_scale_sets"], True, WITHOUT, True),
    ("gpu_operator", "present", None, True, WITHOUT, True),
    ("gitlab_runner", "present", ["all"], True, WITH, False),
    ("gitlab_runner", "absent", ["all"], True, WITHOUT, False),
    ("gitlab_runner", "present", ["all"], False, WITHOUT, False),
    ("gitlab_runner", "present", ["gitlab_runner_preflight", "always"], True, WITHOUT, False),
    ("gitlab_runner", "present", ["all"], True, None, False),
    ("gpu_canary", "present", ["all"], True, WITHOUT, False),
])
def test_warning_rule(role, state, run_tags, whole, play, warns):
    message = converge_follows.warning(role, state, run_tags, whole, play)
    assert (message is not None) is warns
    if warns:
        assert message.startswith("%s only plans: no role gpuci.runners.converge" % role)
