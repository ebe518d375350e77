# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpu_operator's wait for GPU nodes (gpu_operator_wait_for_gpu_nodes) over the testbed's nodes.

The simulated GPU nodes (tools/testbed/nodes.yaml) advertise nvidia.com/gpu,
one of them MIG slices too, as a device plugin would; the CPU and /dev/dri
nodes advertise none. The wait is the role's own task file
(tasks/gpu_nodes.yml), run alone: it passes for as many nodes as advertise
GPUs and gives up, after its timeout, for one more.
"""
from __future__ import annotations

import json

import pytest
from helpers import playbook_for_testbed

SIMULATED_GPU_NODES = {"gpu-l40s-0", "gpu-a100-0", "gpu-a10-0"}
NOT_GPU_NODES = {"cpu-0", "cpu-1", "dri-0"}


def _wait_playbook(folder, count: int) -> str:
    return playbook_for_testbed(folder / f"wait-{count}.yml", [
        {"ansible.builtin.include_role": {"name": "gpuci.runners.gpu_operator", "tasks_from": "gpu_nodes.yml"},
         "vars": {"gpu_operator_wait_for_gpu_nodes": True, "gpu_operator_wait_for_gpu_nodes_count": count,
                  "gpu_operator_wait_for_gpu_nodes_timeout": 10}},
        {"ansible.builtin.copy": {"content": "{{ __gpu_operator_nodes.resources | gpuci.runners.gpu_nodes | to_json }}",
                                  "dest": str(folder / "gpu-nodes.json")},
         "delegate_to": "localhost"},
    ])


@pytest.fixture(scope="module")
def gpu_nodes(playbooks, tmp_path_factory):
    """The names the role's filter finds among the testbed's nodes, from a wait for one node."""
    folder = tmp_path_factory.mktemp("gpu-nodes")
    playbooks.run(_wait_playbook(folder, 1)).assert_ok()
    return folder, json.loads((folder / "gpu-nodes.json").read_text())


def test_the_nodes_advertising_gpus_or_mig_slices_are_found(gpu_nodes):
    _folder, names = gpu_nodes
    assert SIMULATED_GPU_NODES <= set(names), names
    assert not NOT_GPU_NODES & set(names), names


def test_the_wait_gives_up_after_its_timeout_when_too_few_nodes_advertise_gpus(playbooks, gpu_nodes):
    folder, names = gpu_nodes
    playbooks.run(_wait_playbook(folder, len(names))).assert_ok()
    playbooks.run(_wait_playbook(folder, len(names) + 1)).assert_failed_with(
        "Wait for nodes advertising NVIDIA GPUs", "FAILED - RETRYING")
