# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
import copy

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import (
    builtin_class_names,
    builtin_classes_of_product,
    get_class,
    merged_classes,
    mig_resource,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


def test_builtin_names():
    assert builtin_class_names() == ["a10", "a100", "a100-40gb", "dri", "h100", "h200", "l40s"]


def test_builtin_classes_of_product():
    assert builtin_classes_of_product("NVIDIA-H200") == ["h200"]
    assert builtin_classes_of_product("NVIDIA-H100-80GB-HBM3") == ["h100"]
    assert builtin_classes_of_product("gpuci-FAKE-stand-in") == []


@pytest.mark.parametrize(
    "name, product, memory_mib",
    [
        ("l40s", "NVIDIA-L40S", 46068),
        ("a100", "NVIDIA-A100-SXM4-80GB", 81920),
        ("a100-40gb", "NVIDIA-A100-SXM4-40GB", 40960),
        ("a10", "NVIDIA-A10", 23028),
        ("h100", "NVIDIA-H100-80GB-HBM3", 81559),
        ("h200", "NVIDIA-H200", 143771),
    ],
)
def test_builtin_nvidia_class(name, product, memory_mib):
    gpu_class = merged_classes()[name]
    assert gpu_class["product"] == product
    assert gpu_class["memory_mib"] == memory_mib
    assert gpu_class["resource"] == "nvidia.com/gpu"
    assert gpu_class["gpu_access"] == ["cuda"]
    assert gpu_class["node_selector"] == {"nvidia.com/gpu.product": product}
    assert gpu_class["tolerations"] == [GPU_TOLERATION]


@pytest.mark.parametrize(
    "name, profiles",
    [
        ("a100", ["1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"]),
        ("h100", ["1g.10gb", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"]),
        ("h200", ["1g.18gb", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb", "7g.141gb"]),
        ("a100-40gb", ["1g.5gb", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"]),
        ("l40s", []),
        ("a10", []),
    ],
)
def test_builtin_mig_profiles(name, profiles):
    assert merged_classes()[name]["mig_profiles"] == profiles


def test_builtin_dri_class():
    dri = merged_classes()["dri"]
    assert dri["gpu_access"] == ["dri"]
    assert dri["resource"] is None
    assert dri["product"] is None
    assert dri["node_selector"] == {"gpuci.runners/dri": "true"}
    assert dri["tolerations"] == [{"key": "gpuci.runners/dri", "operator": "Exists", "effect": "NoSchedule"}]


def test_override_replaces_named_keys_only():
    classes = merged_classes({"a100": {"memory_mib": 40960, "node_selector": {"pool": "a100"}}})
    assert classes["a100"]["memory_mib"] == 40960
    assert classes["a100"]["node_selector"] == {"pool": "a100"}
    assert classes["a100"]["product"] == "NVIDIA-A100-SXM4-80GB"
    assert classes["a100"]["tolerations"] == [GPU_TOLERATION]


def test_override_of_product_moves_the_node_selector():
    classes = merged_classes({"a100": {"product": "NVIDIA-A100-PCIE-40GB"}})
    assert classes["a100"]["node_selector"] == {"nvidia.com/gpu.product": "NVIDIA-A100-PCIE-40GB"}


def test_null_unsets_a_key_so_the_default_applies():
    classes = merged_classes({"dri": {"tolerations": None}})
    assert classes["dri"]["tolerations"] == []


def test_new_cuda_class_gets_nvidia_defaults():
    classes = merged_classes({"l4": {"product": "NVIDIA-L4", "gpu_access": ["cuda"]}})
    assert classes["l4"] == {
        "product": "NVIDIA-L4",
        "memory_mib": None,
        "resource": "nvidia.com/gpu",
        "mig_profiles": [],
        "gpu_access": ["cuda"],
        "node_selector": {"nvidia.com/gpu.product": "NVIDIA-L4"},
        "dra_selector": 'device.attributes["gpu.nvidia.com"].productName.replace(" ", "-") == "NVIDIA-L4"',
        "tolerations": [GPU_TOLERATION],
    }
    assert "l40s" in classes


def test_new_dri_class_uses_its_node_selector():
    classes = merged_classes({"igpu": {"gpu_access": ["dri"], "node_selector": {"example.com/igpu": "true"}}})
    assert classes["igpu"]["resource"] is None
    assert classes["igpu"]["tolerations"] == []
    assert classes["igpu"]["node_selector"] == {"example.com/igpu": "true"}


def test_merge_does_not_mutate_input_or_builtins():
    user = {"l40s": {"node_selector": {"a": "b"}, "tolerations": [{"key": "x", "operator": "Exists"}]}}
    before = copy.deepcopy(user)
    first = merged_classes(user)
    first["l40s"]["node_selector"]["changed"] = "yes"
    first["a100"]["mig_profiles"].append("9g.1tb")
    assert user == before
    assert "9g.1tb" not in merged_classes()["a100"]["mig_profiles"]
    assert merged_classes(user)["l40s"]["node_selector"] == {"a": "b"}


def test_get_class_and_mig_resource():
    classes = merged_classes()
    assert get_class(classes, "a10", "pool.gpu_class")["product"] == "NVIDIA-A10"
    assert mig_resource("1g.10gb") == "nvidia.com/mig-1g.10gb"


@pytest.mark.parametrize(
    "user, expected",
    [
        ("l40s", ["gpu_classes:", "must be a mapping", "'l40s'"]),
        ({"l40s": ["cuda"]}, ["gpu_classes.l40s:", "must be a mapping", "['cuda']"]),
        ({"l40s": {"vram": 48}}, ["gpu_classes.l40s.vram:", "unknown key"]),
        ({"l4": {"product": "NVIDIA-L4"}}, ["gpu_classes.l4.gpu_access:", "is required"]),
        ({"l40s": {"gpu_access": []}}, ["gpu_classes.l40s.gpu_access:", "at least one gpu_access mode", "[]"]),
        ({"l40s": {"gpu_access": ["opengl"]}}, ["gpu_classes.l40s.gpu_access[0]:", "unknown gpu_access mode", "'opengl'"]),
        ({"l40s": {"gpu_access": "cuda"}}, ["gpu_classes.l40s.gpu_access:", "list of strings", "'cuda'"]),
        ({"l40s": {"product": 40}}, ["gpu_classes.l40s.product:", "non-empty string", "40"]),
        ({"l40s": {"memory_mib": True}}, ["gpu_classes.l40s.memory_mib:", "integer", "True"]),
        ({"l40s": {"memory_mib": 0}}, ["gpu_classes.l40s.memory_mib:", ">= 1", "0"]),
        ({"l40s": {"resource": ""}}, ["gpu_classes.l40s.resource:", "non-empty string", "''"]),
        ({"l40s": {"mig_profiles": "1g.10gb"}}, ["gpu_classes.l40s.mig_profiles:", "'1g.10gb'"]),
        ({"l40s": {"node_selector": {"gpu": True}}}, ["gpu_classes.l40s.node_selector.gpu:", "quote it", "True"]),
        ({"l40s": {"node_selector": "gpu=l40s"}}, ["gpu_classes.l40s.node_selector:", "mapping", "'gpu=l40s'"]),
        ({"l40s": {"tolerations": [{"key": "a", "effect": "Never"}]}},
         ["gpu_classes.l40s.tolerations[0].effect:", "NoSchedule", "'Never'"]),
        ({"igpu": {"gpu_access": ["dri"]}}, ["gpu_classes.igpu:", "needs a product or a non-empty node_selector"]),
        ({"igpu": {"gpu_access": ["dri"], "node_selector": {}}}, ["gpu_classes.igpu:", "needs a product"]),
        ({5: {"gpu_access": ["cuda"]}}, ["gpu_classes:", "class names", "5"]),
    ],
)
def test_bad_gpu_classes(user, expected):
    with pytest.raises(ValidationError) as error:
        merged_classes(user)
    for text in expected:
        assert text in str(error.value)


@pytest.mark.parametrize("name, expected", [("v100", "'v100'"), (7, "7")])
def test_get_class_unknown(name, expected):
    with pytest.raises(ValidationError) as error:
        get_class(merged_classes(), name, "pool.gpu_class")
    assert str(error.value).startswith("pool.gpu_class:")
    assert expected in str(error.value)


# `lanes`, a class's old name for gpu_access, is no longer read: refused with the key to write instead.
@pytest.mark.parametrize("entry", [{"lanes": ["cuda"]}, {"lanes": ["dri"], "gpu_access": ["dri"]}])
def test_lanes_is_refused_naming_gpu_access(entry):
    with pytest.raises(ValidationError) as error:
        merged_classes({"l40s": entry})
    assert str(error.value) == ("gpu_classes.l40s.lanes: was renamed gpu_access; set gpu_classes.l40s.gpu_access "
                                "instead (same values)")
