# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A present cluster role in a play without gpuci.runners.converge warns that nothing will be applied.

Real ansible-playbook runs of small plays of the kind users write, on
inventories/local with a kubeconfig that does not exist: the plays below
that warn never reach a cluster, and the converge in the others is
included with ``when: false``, so no play touches one.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
WARNING = "gitlab_runner only plans: no role gpuci.runners.converge was found"
PLAN_TASK = "gitlab_runner : Check and plan the pools' releases"

ROLE_ONLY = {"roles": [{"role": "gpuci.runners.gitlab_runner"}]}
CONVERGE_INCLUDED = {
    "roles": [{"role": "gpuci.runners.gitlab_runner"}],
    "tasks": [{"name": "Converge (not run here)", "when": False,
               "ansible.builtin.include_role": {"name": "gpuci.runners.converge"}}],
}
# The converge under its short name, found through the play's collections, inside a block.
CONVERGE_BY_SHORT_NAME = {
    "collections": ["gpuci.runners"],
    "tasks": [{"block": [
        {"ansible.builtin.include_role": {"name": "gpuci.runners.gitlab_runner"}},
        {"ansible.builtin.include_role": {"name": "converge"}, "when": False},
    ]}],
}
PREFLIGHT_ONLY = {"tasks": [{"ansible.builtin.include_role": {
    "name": "gpuci.runners.gitlab_runner", "tasks_from": "preflight.yml"}}]}


def run_play(tmp_path, play, *extra):
    """ansible-playbook on one play against inventories/local with no cluster; returns (rc, output)."""
    playbook = tmp_path / "play.yml"
    playbook.write_text(yaml.safe_dump([dict(name="A user's play", hosts="gpuci_clusters", gather_facts=False,
                                             **play)], sort_keys=False))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               GPUCI_KUBECONFIG=str(tmp_path / "no-such-kubeconfig"))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", str(REPO / "inventories" / "local"),
           str(playbook), *extra]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=300)
    return proc.returncode, " ".join((proc.stdout + proc.stderr).split())


def test_a_role_without_the_converge_warns(tmp_path):
    returncode, output = run_play(tmp_path, ROLE_ONLY)
    assert returncode == 0, output[-4000:]
    assert PLAN_TASK in output, output[-4000:]
    assert "[WARNING]: " + WARNING in output, output[-4000:]
    assert output.count(WARNING) == 1, "said once, not per cluster or per task"


@pytest.mark.parametrize("play", [CONVERGE_INCLUDED, CONVERGE_BY_SHORT_NAME, PREFLIGHT_ONLY],
                         ids=["include_role", "short-name-in-block", "tasks_from-preflight"])
def test_no_warning_when_the_play_converges_or_only_plans(tmp_path, play):
    returncode, output = run_play(tmp_path, play)
    assert returncode == 0, output[-4000:]
    assert PLAN_TASK in output, output[-4000:]
    assert WARNING not in output, output[-4000:]


def test_no_warning_for_a_preflight_only_run(tmp_path):
    returncode, output = run_play(tmp_path, ROLE_ONLY, "--tags", "gitlab_runner_preflight")
    assert returncode == 0, output[-4000:]
    assert PLAN_TASK in output, output[-4000:]
    assert WARNING not in output, output[-4000:]


def test_no_warning_when_the_role_removes(tmp_path):
    """state absent is the role's own path (it then reaches for the missing cluster and fails; the plan came first)."""
    _returncode, output = run_play(tmp_path, ROLE_ONLY, "-e", "gitlab_runner_state=absent")
    assert PLAN_TASK in output, output[-4000:]
    assert WARNING not in output, output[-4000:]
