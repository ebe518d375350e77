# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
import copy

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.pod_patch import gpu_pod_patch
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
DRI_TOLERATION = {"key": "gpuci.runners/dri", "operator": "Exists", "effect": "NoSchedule"}


def gpu_limits(patch, container="build"):
    (entry,) = [c for c in patch["containers"] if c["name"] == container]
    assert entry["resources"]["requests"] == entry["resources"]["limits"]
    return entry["resources"]["limits"]


def test_l40s_one_gpu():
    assert gpu_pod_patch({"gpu_class": "l40s", "gpus": 1}) == {
        "containers": [
            {
                "name": "build",
                "resources": {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}},
            }
        ],
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L40S"},
        "tolerations": [GPU_TOLERATION],
        "runtimeClassName": "nvidia",
    }


def test_gpus_default_to_one_and_are_string_quantities():
    assert gpu_limits(gpu_pod_patch({"gpu_class": "a10"})) == {"nvidia.com/gpu": "1"}
    assert gpu_limits(gpu_pod_patch({"gpu_class": "h100", "gpus": 4})) == {"nvidia.com/gpu": "4"}


@pytest.mark.parametrize("gpu_class, profile", [("a100", "1g.10gb"), ("a100-40gb", "3g.20gb"), ("h100", "7g.80gb")])
def test_mig_profile_requests_the_mixed_strategy_resource(gpu_class, profile):
    patch = gpu_pod_patch({"gpu_class": gpu_class, "mig_profile": profile})
    assert gpu_limits(patch) == {"nvidia.com/mig-%s" % profile: "1"}
    assert "nvidia.com/gpu" not in gpu_limits(patch)


def test_gpu_access_dri_mounts_dev_dri_and_requests_nothing():
    patch = gpu_pod_patch({"gpu_class": "dri"})
    assert patch == {
        "containers": [{"name": "build", "volumeMounts": [{"name": "dev-dri", "mountPath": "/dev/dri"}]}],
        "volumes": [{"name": "dev-dri", "hostPath": {"path": "/dev/dri", "type": "Directory"}}],
        "nodeSelector": {"gpuci.runners/dri": "true"},
        "tolerations": [DRI_TOLERATION],
    }


def test_gpu_access_dri_takes_a_runtime_class_when_asked():
    assert gpu_pod_patch({"gpu_class": "dri", "runtime_class": "nvidia"})["runtimeClassName"] == "nvidia"


def test_class_offering_both_gpu_access_defaults_to_cuda():
    classes = {"l40s": {"gpu_access": ["cuda", "dri"]}}
    assert "resources" in gpu_pod_patch({"gpu_class": "l40s"}, classes)["containers"][0]
    dri = gpu_pod_patch({"gpu_class": "l40s", "gpu_access": "dri"}, classes)
    assert "resources" not in dri["containers"][0]
    assert dri["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-L40S"}


def test_empty_runtime_class_means_none():
    assert "runtimeClassName" not in gpu_pod_patch({"gpu_class": "l40s", "runtime_class": ""})


def test_custom_runtime_class_and_container():
    patch = gpu_pod_patch({"gpu_class": "a10", "runtime_class": "nvidia-cdi", "container": "runner"})
    assert patch["runtimeClassName"] == "nvidia-cdi"
    assert patch["containers"][0]["name"] == "runner"


def test_privileged_only_on_request():
    assert "securityContext" not in gpu_pod_patch({"gpu_class": "l40s"})["containers"][0]
    assert "securityContext" not in gpu_pod_patch({"gpu_class": "l40s", "privileged": False})["containers"][0]
    patch = gpu_pod_patch({"gpu_class": "l40s", "privileged": True})
    assert patch["containers"][0]["securityContext"] == {"privileged": True}


def test_pool_node_selector_merges_over_the_class():
    patch = gpu_pod_patch({"gpu_class": "a100", "node_selector": {"pool": "ci", "nvidia.com/gpu.product": "X"}})
    assert patch["nodeSelector"] == {"nvidia.com/gpu.product": "X", "pool": "ci"}


def test_tolerations_class_first_then_pool_without_duplicates():
    extra = {"key": "ci", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
    patch = gpu_pod_patch({"gpu_class": "l40s", "tolerations": [dict(GPU_TOLERATION), {"key": "ci", "value": "gpu", "effect": "NoSchedule"}]})
    assert patch["tolerations"] == [GPU_TOLERATION, extra]


def test_user_class_from_inventory():
    classes = {"l4": {"product": "NVIDIA-L4", "gpu_access": ["cuda"]}}
    patch = gpu_pod_patch({"gpu_class": "l4", "gpus": 2}, classes)
    assert patch["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-L4"}
    assert gpu_limits(patch) == {"nvidia.com/gpu": "2"}


def test_whole_pools_and_scale_sets_are_accepted():
    gitlab_pool = {"name": "gpu", "token": "t", "namespace": "ci", "gpu_class": "l40s", "hpa": {}, "tags": ["gpu"]}
    scale_set = {"name": "gpu", "github_token": "t", "container_mode": "dind", "gpu_class": "l40s", "labels": ["gpu"]}
    assert gpu_pod_patch(gitlab_pool) == gpu_pod_patch(scale_set) == gpu_pod_patch({"gpu_class": "l40s"})


def test_inputs_are_not_mutated():
    pool = {"gpu_class": "l40s", "node_selector": {"a": "b"}, "tolerations": [{"key": "x"}]}
    classes = {"l40s": {"tolerations": [{"key": "y"}]}}
    before = copy.deepcopy((pool, classes))
    patch = gpu_pod_patch(pool, classes)
    patch["nodeSelector"]["c"] = "d"
    patch["tolerations"][0]["key"] = "z"
    assert (pool, classes) == before


BAD_POOLS = [
    ("l40s", ["pool:", "must be a mapping", "'l40s'"]),
    ({"gpu_clas": "l40s"}, ["pool.gpu_clas:", "unknown key"]),
    ({"gpus": 1}, ["pool.gpu_class:", "is required"]),
    ({"gpu_class": "v100"}, ["pool.gpu_class:", "unknown GPU class", "'v100'"]),
    ({"gpu_class": ["l40s"]}, ["pool.gpu_class:", "['l40s']"]),
    ({"gpu_class": "l40s", "gpus": 0}, ["pool.gpus:", ">= 1", "(got 0)"]),
    ({"gpu_class": "l40s", "gpus": -2}, ["pool.gpus:", "(got -2)"]),
    ({"gpu_class": "l40s", "gpus": "1"}, ["pool.gpus:", "integer", "'1'"]),
    ({"gpu_class": "l40s", "gpus": True}, ["pool.gpus:", "integer", "True"]),
    ({"gpu_class": "l40s", "gpus": 1.5}, ["pool.gpus:", "integer", "1.5"]),
    ({"gpu_class": "a100", "gpus": 1, "mig_profile": "1g.10gb"}, ["pool.mig_profile:", "gpus", "'1g.10gb'"]),
    ({"gpu_class": "l40s", "mig_profile": "1g.10gb"}, ["pool.mig_profile:", "no such MIG profile", "none", "'1g.10gb'"]),
    ({"gpu_class": "a100", "mig_profile": "1g.5gb"}, ["pool.mig_profile:", "7g.80gb", "'1g.5gb'"]),
    ({"gpu_class": "a100", "mig_profile": 3}, ["pool.mig_profile:", "string", "3"]),
    ({"gpu_class": "l40s", "gpu_access": "vulkan"}, ["pool.gpu_access:", "one of cuda, dri", "'vulkan'"]),
    ({"gpu_class": "l40s", "gpu_access": "dri"}, ["pool.gpu_access:", "serves only the gpu_access cuda", "'dri'"]),
    ({"gpu_class": "dri", "gpu_access": "cuda"}, ["pool.gpu_access:", "serves only the gpu_access dri", "'cuda'"]),
    ({"gpu_class": "dri", "gpus": 1}, ["pool.gpus:", "gpu_access dri", "(got 1)"]),
    ({"gpu_class": "dri", "mig_profile": "1g.10gb"}, ["pool.mig_profile:", "gpu_access dri", "'1g.10gb'"]),
    ({"gpu_class": "l40s", "node_selector": ["a=b"]}, ["pool.node_selector:", "mapping", "['a=b']"]),
    ({"gpu_class": "l40s", "node_selector": {"ci": True}}, ["pool.node_selector.ci:", "string", "True"]),
    ({"gpu_class": "l40s", "tolerations": {"key": "a"}}, ["pool.tolerations:", "list", "{'key': 'a'}"]),
    ({"gpu_class": "l40s", "tolerations": ["a"]}, ["pool.tolerations[0]:", "mapping", "'a'"]),
    ({"gpu_class": "l40s", "tolerations": [{"effect": "NoSchedule"}]}, ["pool.tolerations[0].key:", "is required"]),
    ({"gpu_class": "l40s", "tolerations": [{"key": "a", "effect": "Never"}]}, ["pool.tolerations[0].effect:", "'Never'"]),
    ({"gpu_class": "l40s", "tolerations": [{"key": "a", "operator": "In"}]}, ["pool.tolerations[0].operator:", "'In'"]),
    ({"gpu_class": "l40s", "tolerations": [{"key": "a", "operator": "Exists", "value": "b"}]},
     ["pool.tolerations[0].value:", "Exists", "'b'"]),
    ({"gpu_class": "l40s", "tolerations": [{"key": "a", "operator": "Equal"}]}, ["pool.tolerations[0].value:", "is required"]),
    ({"gpu_class": "l40s", "tolerations": [{"key": "a", "tolerationSeconds": 5}]}, ["pool.tolerations[0].tolerationSeconds:", "unknown key"]),
    ({"gpu_class": "l40s", "runtime_class": 5}, ["pool.runtime_class:", "string", "5"]),
    ({"gpu_class": "l40s", "privileged": "yes"}, ["pool.privileged:", "true or false", "'yes'"]),
    ({"gpu_class": "l40s", "container": ""}, ["pool.container:", "empty", "''"]),
]


@pytest.mark.parametrize("pool, expected", BAD_POOLS)
def test_bad_pool(pool, expected):
    with pytest.raises(ValidationError) as error:
        gpu_pod_patch(pool)
    for text in expected:
        assert text in str(error.value)


def test_bad_gpu_classes_argument():
    with pytest.raises(ValidationError, match=r"gpu_classes\.l40s\.gpu_access\[0\]: unknown gpu_access mode.*'opengl'"):
        gpu_pod_patch({"gpu_class": "l40s"}, {"l40s": {"gpu_access": ["opengl"]}})


@pytest.mark.parametrize("runtime_class, expected", [(None, "nvidia"), ("nvidia-cdi", "nvidia-cdi"), ("", None)])
def test_runtime_class_argument_is_the_cuda_default(runtime_class, expected):
    assert gpu_pod_patch({"gpu_class": "l40s"}, runtime_class=runtime_class).get("runtimeClassName") == expected
    assert "runtimeClassName" not in gpu_pod_patch({"gpu_class": "dri"}, runtime_class=runtime_class)


def test_bad_runtime_class_argument_names_it():
    with pytest.raises(ValidationError, match="^runtime_class: must be a string"):
        gpu_pod_patch({"gpu_class": "l40s"}, runtime_class=5)


# `lane`, gpu_access's old name, is no longer read: refused with the key to write instead.
@pytest.mark.parametrize("pool", [{"gpu_class": "dri", "lane": "dri"}, {"gpu_class": "l40s", "lane": "cuda", "gpu_access": "cuda"}])
def test_lane_is_refused_naming_gpu_access(pool):
    with pytest.raises(ValidationError, match=r"^pool\.lane: was renamed gpu_access; set pool\.gpu_access instead"):
        gpu_pod_patch(pool)
