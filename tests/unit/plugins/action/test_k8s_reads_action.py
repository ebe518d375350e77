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
