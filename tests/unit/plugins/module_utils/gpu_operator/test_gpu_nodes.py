# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Which nodes advertise NVIDIA GPUs (module_utils/gpu_operator/gpu_nodes.py), over nodes as the API returns them."""

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.gpu_nodes import gpu_nodes


def node(name, **allocatable):
    return {"metadata": {"name": name}, "status": {"allocatable": {"cpu": "8", "memory": "32Gi", **allocatable}}}


def test_whole_gpus_and_mig_slices_count():
    nodes = [node("l40s", **{"nvidia.com/gpu": "2"}), node("a100-mig", **{"nvidia.com/mig-1g.10gb": "7"}),
             node("cpu")]
    assert gpu_nodes(nodes) == ["a100-mig", "l40s"]


def test_a_device_plugin_that_advertises_none_does_not_count():
    nodes = [node("starting", **{"nvidia.com/gpu": "0"}), node("slices-gone", **{"nvidia.com/mig-3g.40gb": 0})]
    assert gpu_nodes(nodes) == []


def test_other_resources_named_alike_do_not_count():
    # Time-slicing replicas under a renamed resource, and other vendors' devices.
    nodes = [node("shared", **{"nvidia.com/gpu.shared": "4"}), node("amd", **{"amd.com/gpu": "1"}),
             node("dri", **{"gpu.intel.com/i915": "1"})]
    assert gpu_nodes(nodes) == []


def test_nodes_without_status_are_skipped():
    assert gpu_nodes([{"metadata": {"name": "new"}}, {"metadata": {"name": "empty"}, "status": {}}]) == []
    assert gpu_nodes(None) == []
