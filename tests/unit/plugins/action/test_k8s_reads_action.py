# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""When k8s_reads answers in the controller's process, and when its module must run (plugins/plugin_utils/target_is_controller.py)."""

import sys

import pytest

from ansible_collections.gpuci.runners.plugins.plugin_utils.target_is_controller import runs_in_controller

HERE = sys.executable


def test_the_controller_as_target_is_answered_here():
    assert runs_in_controller("local", False, [], HERE) == ""
    assert runs_in_controller("local", False, None, HERE, controller_python=HERE) == ""
    assert runs_in_controller("local", False, [{}, {}], HERE) == ""


@pytest.mark.parametrize("transport, become, environment, interpreter, why", [
    ("ssh", False, [], HERE, "the connection is ssh, not local"),
    ("local", True, [], HERE, "the task becomes another user"),
    ("local", False, [{"K8S_AUTH_CONTEXT": "east"}], HERE, "the task sets an environment"),
    ("local", False, [], "/usr/bin/python3-elsewhere", "the target's Python (/usr/bin/python3-elsewhere) is not"),
    ("local", False, [], None, "the target's Python (discovered) is not"),
])
def test_anything_else_runs_the_module(transport, become, environment, interpreter, why):
    assert runs_in_controller(transport, become, environment, interpreter).startswith(why)


def test_a_link_to_the_controllers_python_is_the_controllers(tmp_path):
    link = tmp_path / "python3"
    link.symlink_to(HERE)
    assert runs_in_controller("local", False, [], str(link)) == ""


def _action_answering(monkeypatch, answer, reads):
    """The k8s_reads action for a task with ``reads``, its base (the reads themselves) answering ``answer``."""
    from types import SimpleNamespace

    from ansible_collections.gpuci.runners.plugins.action import k8s_reads
    from ansible_collections.gpuci.runners.plugins.plugin_utils.target_is_controller import TargetIsControllerAction

    monkeypatch.setattr(TargetIsControllerAction, "run", lambda self, tmp=None, task_vars=None: dict(answer))
    action = object.__new__(k8s_reads.ActionModule)
    action._task = SimpleNamespace(args={"reads": reads})
    return action


def test_the_action_marks_a_read_of_secrets_no_log_wherever_it_was_answered(monkeypatch):
    answer = {"changed": False, "reads": {"secrets": {"resources": [{"data": {"token": "Z2xydC0="}}]}}, "groups": {}}
    action = _action_answering(monkeypatch, answer, [{"key": "secrets", "kind": "Secret"}])
    assert action.run(task_vars={})["_ansible_no_log"] is True


def test_the_action_shows_a_failure_and_reads_of_other_kinds(monkeypatch):
    failed = {"failed": True, "msg": "Cannot reach the Kubernetes API server"}
    assert "_ansible_no_log" not in _action_answering(monkeypatch, failed, [{"key": "s", "kind": "Secret"}]).run()
    nodes = {"changed": False, "reads": {"nodes": {"resources": []}}, "groups": {}}
    assert "_ansible_no_log" not in _action_answering(monkeypatch, nodes, [{"key": "nodes", "kind": "Node"}]).run()
