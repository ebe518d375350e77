# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""k8s_reads answers the same in the controller's process as its module does (plugins/action/k8s_reads.py).

The testbed's inventory targets the controller (connection local, its own
Python), so the action plugin answers there; a task environment makes the
module run instead. Both answers of the same reads must be equal, and the
output at -vvv shows which path ran: only the module has an AnsiballZ payload.
"""
from __future__ import annotations

import json

import pytest
from helpers import playbook_for_testbed

READS = [
    {"key": "default", "kind": "Namespace", "name": "default"},
    {"key": "nodes", "kind": "Node", "group": "cluster", "hidden_fields": ["status"]},
    {"key": "services", "kind": "Service", "group": "cluster", "namespace": "default"},
    {"key": "missing_kind", "kind": "NoSuchKind", "api_version": "example.com/v1"},
]


def _playbook(tmp_path, environment: dict) -> str:
    playbook = tmp_path / ("module.yml" if environment else "here.yml")
    return playbook_for_testbed(playbook, [
        {"gpuci.runners.k8s_reads": {"reads": READS}, "register": "answer",
         **({"environment": environment} if environment else {})},
        {"ansible.builtin.copy": {"content": "{{ {'reads': answer.reads, 'groups': answer.groups} | to_json }}",
                                  "dest": str(tmp_path / (playbook.stem + ".json"))},
         "delegate_to": "localhost"},
    ])


@pytest.fixture(scope="module")
def answers(playbooks, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("k8s-reads")
    outputs = {}
    for name, environment in (("here", {}), ("module", {"GPUCI_K8S_READS_TEST": "module"})):
        run = playbooks.run(_playbook(tmp_path, environment), verbosity=3).assert_ok()
        outputs[name] = (json.loads((tmp_path / f"{name}.json").read_text()), run.output)
    return outputs


def test_the_controller_answers_without_a_module_run(answers):
    _answer, output = answers["here"]
    assert "AnsiballZ_k8s_reads.py" not in output, output[-3000:]
    _answer, module_output = answers["module"]
    assert "AnsiballZ_k8s_reads.py" in module_output, module_output[-3000:]


def _shape(answers: dict) -> dict:
    """Each answer without what moves between two runs (resourceVersion, heartbeats): what it found, and which
    fields each object carries."""
    answered = {**answers["reads"], **{"%s/%s" % (group, key): answer for group, keys in answers["groups"].items()
                                       for key, answer in keys.items()}}
    return {key: (answer["api_found"], sorted(
        (obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"], sorted(obj), sorted(obj["metadata"]))
        for obj in answer["resources"])) for key, answer in answered.items()}


def test_both_paths_answer_alike(answers):
    here, module = answers["here"][0], answers["module"][0]
    # The two runs are seconds apart: kwok's heartbeats move the nodes' resourceVersion in between.
    assert _shape(here) == _shape(module)
    assert here["reads"]["default"]["resources"][0]["metadata"]["name"] == "default"
    assert here["reads"]["missing_kind"]["api_found"] is False
    nodes = here["groups"]["cluster"]["nodes"]["resources"]
    assert nodes and all("status" not in node and "managedFields" not in node["metadata"] for node in nodes)
