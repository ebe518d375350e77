# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What ansible-playbook shows and keeps of gpuci.runners.fleet_decide and role_plan.

Never the Secrets the decision holds, at any verbosity, and nothing of either
in Ansible's fact cache (a jsonfile cache here, as AWX's fact storage uses),
but a refusal in full, a bad argument by name, and ARC's note as a line
without its plan. Real runs of the actions on localhost; no cluster is read
(the answers are given), so none is needed."""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.plan import NOTHING_DECLARED
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import gitlab_runner_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.plan import gpu_operator_plan

from test_role_plan_action import settings

REPO = Path(__file__).resolve().parents[4]
TOKEN = "glrt-SHOWN-NOWHERE"
POOL = {"name": "l40s", "gpu_class": "l40s", "gpus": 1, "token": TOKEN}


def run(tmp_path, decide, then=None, verbosity="", first=()):
    """Run ``first`` tasks, one fleet_decide task (``decide``: its arguments) and, after it, a debug of ``then``.

    With a jsonfile fact cache in ``tmp_path / "facts"``.
    """
    tasks = list(first) + [{"name": "decide", "gpuci.runners.fleet_decide": decide, "register": "__gpuci_decision"}]
    if then:
        tasks.append({"name": "after", "ansible.builtin.debug": {"msg": then}})
    playbook = tmp_path / "decide.yml"
    playbook.write_text(json.dumps([{"hosts": "localhost", "gather_facts": False, "tasks": tasks}]))
    env = dict(os.environ, ANSIBLE_CONFIG=str(REPO / "ansible.cfg"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_CACHE_PLUGIN="ansible.builtin.jsonfile", ANSIBLE_CACHE_PLUGIN_CONNECTION=str(tmp_path / "facts"))
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), "-i", "localhost,", "-c", "local", str(playbook)]
    cmd += [verbosity] if verbosity else []
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, check=False, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def test_the_decision_holds_the_token_and_no_verbosity_shows_it(tmp_path):
    plan = gitlab_runner_plan(settings("gitlab_runner", gitlab_runner_pools=[POOL],
                                       gitlab_runner_gitlab_url="https://gitlab.example.com/"))
    decide = {"roles": {"gitlab_runner": {"plan": plan, "pools": [POOL]}}, "read": {}}
    # The Secret to apply holds the token (base64), and a later task reads the decision.
    pending = "__gpuci_decision.gitlab_runner.pending"
    then = "{{ %s.settled }} {{ __gpuci_decision.decided }} {{ %s.apply | length }}" % (pending, pending)
    code, output = run(tmp_path, decide, then, verbosity="-vvv")
    assert code == 0, output[-3000:]
    assert "False ['gitlab_runner'] " in output, output[-3000:]
    encoded = base64.b64encode(TOKEN.encode()).decode()
    assert TOKEN not in output and encoded not in output
    assert "the output has been hidden" in output


def test_the_fact_cache_keeps_neither_the_decision_nor_a_plan(tmp_path):
    """A jsonfile fact cache (AWX's fact storage writes one and keeps it in its database) holds nothing of ours."""
    pool_settings = settings("gitlab_runner", gitlab_runner_pools=[POOL],
                             gitlab_runner_gitlab_url="https://gitlab.example.com/")
    plan_task = {"name": "plan", "gpuci.runners.role_plan": {"role": "gitlab_runner", "settings": pool_settings},
                 "register": "__gitlab_runner_plan", "no_log": True}
    decide = {"roles": {"gitlab_runner": {"plan": "{{ __gitlab_runner_plan }}", "pools": [POOL]}}, "read": {},
              }
    code, output = run(tmp_path, decide, "decided: {{ __gpuci_decision.decided | join(', ') }}", first=[plan_task])
    assert code == 0 and "decided: gitlab_runner" in output, output[-3000:]
    cached = "".join(path.read_text() for path in (tmp_path / "facts").glob("*"))
    encoded = base64.b64encode(TOKEN.encode()).decode()
    assert TOKEN not in cached and encoded not in cached
    assert "__gitlab_runner_plan" not in cached and "gitlab-runner-l40s" not in cached and "pending" not in cached


def test_arc_says_in_a_line_that_nothing_of_it_is_declared_not_its_plan(tmp_path):
    nothing = {"name": "plan", "gpuci.runners.role_plan": {"role": "arc_runners", "settings": settings(
        "arc_runners", arc_runners_state="present")}, "register": "__arc_runners_plan"}
    code, output = run(tmp_path, {"roles": {}, "read": {}}, first=[nothing])
    assert code == 0, output[-3000:]
    assert "localhost (arc_runners): " + NOTHING_DECLARED.split(":", maxsplit=1)[0] in output, output[-3000:]
    assert "namespace_selectors" not in output


def test_a_refusal_is_shown_whole(tmp_path):
    plan = gpu_operator_plan(settings("gpu_operator"))
    policy = {"kind": "ClusterPolicy", "metadata": {"name": "cluster-policy", "annotations": {
        "meta.helm.sh/release-name": "someone-else", "meta.helm.sh/release-namespace": "elsewhere"}}}
    decide = {"roles": {"gpu_operator": {"plan": plan}},
              "read": {"gpu_operator": {"policy": {"resources": [policy]}}}}
    code, output = run(tmp_path, decide)
    assert code != 0
    assert "someone-else" in output and "there can be only one per cluster" in output, output[-3000:]
    assert "hidden" not in output


def test_a_bad_argument_is_named(tmp_path):
    code, output = run(tmp_path, {"roles": {}, "read": {}, "flet": True})
    assert code != 0
    assert "fleet_decide: " in output and "flet" in output, output[-3000:]
