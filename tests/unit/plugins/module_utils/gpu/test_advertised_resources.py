# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a node advertises (module_utils/gpu/nodes.py), over nodes as the API returns them.

Which of those resources count as NVIDIA GPUs is the gpu_operator wait's
question (test_gpu_nodes.py); which node can take a lane's job, the canary's
(tests/unit/plugins/filter/test_canary_lanes.py)."""

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.nodes import advertises, allocatable


def node(**allocatable_resources):
    return {"metadata": {"name": "n"}, "status": {"allocatable": {"cpu": "8", **allocatable_resources}}}


@pytest.mark.parametrize("quantity", ["2", 2, "1"])
def test_a_resource_above_zero_is_advertised_as_a_string_or_a_number(quantity):
    assert advertises(node(**{"nvidia.com/gpu": quantity}), "nvidia.com/gpu")


@pytest.mark.parametrize("quantity", ["0", 0, ""])
def test_a_resource_at_zero_is_not_advertised(quantity):
    # A device plugin that is starting, or whose MIG slices are gone, reports zero.
    assert not advertises(node(**{"nvidia.com/mig-3g.40gb": quantity}), "nvidia.com/mig-3g.40gb")


def test_only_the_named_resource_counts():
    assert not advertises(node(**{"nvidia.com/gpu.shared": "4"}), "nvidia.com/gpu")


@pytest.mark.parametrize("new_node", [{"metadata": {"name": "new"}}, {"status": {}}, {"status": {"allocatable": None}}])
def test_a_node_without_allocatable_resources_advertises_none(new_node):
    assert allocatable(new_node) == {}
    assert not advertises(new_node, "nvidia.com/gpu")


def test_allocatable_is_the_status_field_itself():
    assert allocatable(node(**{"nvidia.com/gpu": "2"})) == {"cpu": "8", "nvidia.com/gpu": "2"}
