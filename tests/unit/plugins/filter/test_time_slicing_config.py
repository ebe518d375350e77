# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
import pytest
import yaml

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.time_slicing import time_slicing_config
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError


def parsed(replicas, classes=None):
    return dict((name, yaml.safe_load(text)) for name, text in time_slicing_config(replicas, classes).items())


def shared(count, resource="nvidia.com/gpu"):
    return {"version": "v1", "sharing": {"timeSlicing": {"resources": [{"name": resource, "replicas": count}]}}}


def test_one_config_per_class_and_any(golden_yaml):
    config = time_slicing_config({"l40s": 4, "a10": 2, "any": 2})
    assert golden_yaml("time_slicing/l40s-a10-any.yaml", config) == config
    assert parsed({"l40s": 4, "a10": 2, "any": 2}) == {"l40s": shared(4), "a10": shared(2), "any": shared(2)}


def test_resource_keys_go_into_any():
    config = parsed({"nvidia.com/gpu": 3, "nvidia.com/mig-1g.10gb": 2})
    assert config == {"any": {"version": "v1", "sharing": {"timeSlicing": {"resources": [
        {"name": "nvidia.com/gpu", "replicas": 3}, {"name": "nvidia.com/mig-1g.10gb", "replicas": 2}]}}}}


def test_one_replica_means_no_sharing():
    assert parsed({"a100": 1}) == {"a100": {"version": "v1"}}


def test_user_class_with_its_own_resource():
    classes = {"l4": {"product": "NVIDIA-L4", "gpu_access": ["cuda"], "resource": "nvidia.com/gpu"}}
    assert parsed({"l4": 8}, classes) == {"l4": shared(8)}


def test_empty_input_gives_no_configs():
    assert time_slicing_config({}) == {}


BAD = [
    ([4], ["replicas:", "mapping", "[4]"]),
    ({"v100": 2}, ["replicas.v100:", "unknown GPU class", "'v100'"]),
    ({"l40s": 0}, ["replicas.l40s:", ">= 1", "(got 0)"]),
    ({"l40s": True}, ["replicas.l40s:", "integer", "True"]),
    ({"l40s": "4"}, ["replicas.l40s:", "integer", "'4'"]),
    ({"dri": 2}, ["replicas.dri:", "no device plugin resource", "'dri'"]),
    ({"any": 2, "nvidia.com/gpu": 4}, ["replicas.nvidia.com/gpu:", "second time"]),
]


@pytest.mark.parametrize("replicas, expected", BAD)
def test_bad_replicas(replicas, expected):
    with pytest.raises(ValidationError) as error:
        time_slicing_config(replicas)
    for text in expected:
        assert text in str(error.value)
