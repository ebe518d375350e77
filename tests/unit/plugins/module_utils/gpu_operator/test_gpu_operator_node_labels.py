# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gpu_operator_node_labels: device plugin config label patches, only for nodes that need one."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.filter.gpu_operator_node_labels import FilterModule
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.node_labels import gpu_operator_node_labels

CONFIG, MARKER = "nvidia.com/device-plugin.config", "gpuci.runners/device-plugin-config"
SELECTORS = {"l40s": {"gpu": "l40s"}, "a10": {"gpu": "a10"}, "any-gpu": {"vendor": "nvidia"}}


def node(name, **labels):
    return {"kind": "Node", "metadata": {"name": name, "labels": labels}}


def patches(nodes, label_classes=("l40s", "a10"), release="gpu-operator"):
    return gpu_operator_node_labels({"nodes": nodes, "label_classes": list(label_classes), "class_selectors": SELECTORS,
                                     "labels": {"config": CONFIG, "marker": MARKER}, "release": release})


def test_nodes_of_a_class_to_label_get_its_config_and_the_marker():
    assert patches([node("l40s-0", gpu="l40s"), node("cpu-0")]) == [
        {"name": "l40s-0", "labels": {CONFIG: "l40s", MARKER: "gpu-operator"},
         "summary": "label node l40s-0 with device plugin config l40s"}]


def test_nodes_already_labelled_need_no_patch():
    assert patches([node("l40s-0", gpu="l40s", **{CONFIG: "l40s", MARKER: "gpu-operator"})]) == []


def test_a_label_someone_else_set_is_taken_over_only_where_the_class_matches():
    assert patches([node("l40s-0", gpu="l40s", **{CONFIG: "custom"})])[0]["labels"] == {CONFIG: "l40s", MARKER: "gpu-operator"}
    assert patches([node("cpu-0", **{CONFIG: "custom"})]) == []


def test_our_labels_go_when_no_class_to_label_matches_the_node_any_more():
    moved = node("gpu-0", gpu="a100", **{CONFIG: "l40s", MARKER: "gpu-operator"})
    assert patches([moved]) == [{"name": "gpu-0", "labels": {CONFIG: None, MARKER: None},
                                 "summary": "remove the device plugin config label of node gpu-0"}]


def test_tearing_down_labels_no_class_and_removes_only_this_releases_labels():
    ours = node("l40s-0", gpu="l40s", **{CONFIG: "l40s", MARKER: "gpu-operator"})
    other_release = node("l40s-1", gpu="l40s", **{CONFIG: "l40s", MARKER: "another-operator"})
    assert [p["name"] for p in patches([ours, other_release], label_classes=())] == ["l40s-0"]


def test_a_node_matching_several_classes_takes_the_first_and_keeps_it():
    both = node("gpu-0", gpu="l40s", vendor="nvidia")
    first = patches([both], label_classes=("any-gpu", "l40s"))
    assert first[0]["labels"][CONFIG] == "any-gpu"
    settled = node("gpu-0", gpu="l40s", vendor="nvidia", **{CONFIG: "any-gpu", MARKER: "gpu-operator"})
    assert patches([settled], label_classes=("any-gpu", "l40s")) == []


def test_bad_input_fails_naming_the_filter_and_field():
    with pytest.raises(AnsibleFilterError, match=r"gpuci\.runners\.gpu_operator_node_labels: node_labels\.nodes"):
        FilterModule().filters()["gpu_operator_node_labels"]({
            "nodes": "none", "labels": {"config": CONFIG, "marker": MARKER}, "release": "r"})
