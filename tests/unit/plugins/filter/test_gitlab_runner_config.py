# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""config.toml is checked by parsing it back, and against golden files."""

import copy
import json
import tomllib

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.config import gitlab_runner_config, pool_configs
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

FLAG = "FF_USE_ADVANCED_POD_SPEC_CONFIGURATION"
DEADLINE_FLAG = "FF_USE_POD_ACTIVE_DEADLINE_SECONDS"
CPU_ONLY_TERMS = [
    {
        "matchExpressions": [
            {"key": "nvidia.com/gpu.present", "operator": "NotIn", "values": ["true"]},
            {"key": "gpuci.runners/dri", "operator": "NotIn", "values": ["true"]},
        ]
    }
]

GOLDEN_POOLS = {
    "l40s-1gpu": {"name": "gpu-l40s", "gpu_class": "l40s", "gpus": 1, "namespace": "gitlab-runners", "token": "glrt-SECRET"},
    "a100-mig": {"name": "gpu-a100-mig", "gpu_class": "a100", "mig_profile": "1g.10gb", "namespace": "ci-jobs",
                 "cpu_request": 2, "memory_request": "8Gi", "memory_limit": "16Gi", "tags": ["ska-gpu-a100"]},
    "dri": {"name": "vulkan", "gpu_class": "dri", "privileged": True, "image": "registry.example/vulkan:1"},
    "cpu": {"name": "ska-default", "namespace": "gitlab-runners", "cpu_request": "2", "memory_request": "8G",
            "memory_limit": "16Gi", "extra_config": {"kubernetes": {"poll_timeout": 600}, "output_limit": 16384}},
}


def render(pool, classes=None):
    """Render and parse back; every test goes through tomllib."""
    text = gitlab_runner_config(pool, classes)
    document = tomllib.loads(text)
    assert list(document) == ["runners"]
    assert isinstance(document["runners"], list) and len(document["runners"]) == 1
    return document["runners"][0]


def patches(runner):
    entries = runner["kubernetes"]["pod_spec"]
    assert isinstance(entries, list)  # an array of tables, not a string
    for entry in entries:
        assert entry["patch_type"] == "strategic"
    return dict((entry["name"], json.loads(entry["patch"])) for entry in entries)


@pytest.mark.parametrize("case", sorted(GOLDEN_POOLS))
def test_golden(case, golden):
    path = golden("gitlab/%s.toml" % case, gitlab_runner_config(GOLDEN_POOLS[case]))
    tomllib.loads(path.read_text())


def test_l40s_one_gpu():
    runner = render(GOLDEN_POOLS["l40s-1gpu"])
    assert runner["name"] == "gpu-l40s"
    assert runner["executor"] == "kubernetes"
    assert runner["feature_flags"] == {FLAG: True, DEADLINE_FLAG: True}
    kubernetes = runner["kubernetes"]
    assert kubernetes["namespace"] == "gitlab-runners"
    assert kubernetes["image"] == "nvidia/cuda:12.4.1-base-ubuntu22.04"
    assert "privileged" not in kubernetes and "build_container_security_context" not in kubernetes
    assert kubernetes["runtime_class_name"] == "nvidia"
    assert kubernetes["node_selector"] == {"nvidia.com/gpu.product": "NVIDIA-L40S"}
    assert kubernetes["node_tolerations"] == {"nvidia.com/gpu": "NoSchedule"}
    assert patches(runner) == {
        "gpuci-gpu": {
            "containers": [
                {"name": "build", "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"nvidia.com/gpu": "1"}}}
            ]
        }
    }


def test_no_secret_url_or_token_in_output():
    text = gitlab_runner_config(dict(GOLDEN_POOLS["l40s-1gpu"], gitlab_url="https://gitlab.example"))
    assert "glrt-SECRET" not in text
    runner = tomllib.loads(text)["runners"][0]
    assert "token" not in runner and "url" not in runner


def test_default_namespace_is_the_release_namespace():
    assert render({"name": "x"})["kubernetes"]["namespace"] == "{{ .Release.Namespace }}"


def test_mig_pool():
    runner = render(GOLDEN_POOLS["a100-mig"])
    (patch,) = patches(runner).values()
    assert patch["containers"][0]["resources"]["limits"] == {"nvidia.com/mig-1g.10gb": "1"}
    assert runner["kubernetes"]["node_selector"] == {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
    assert runner["kubernetes"]["cpu_request"] == "2"
    assert runner["kubernetes"]["memory_limit"] == "16Gi"


def test_dri_pool():
    runner = render(GOLDEN_POOLS["dri"])
    kubernetes = runner["kubernetes"]
    assert kubernetes["build_container_security_context"] == {"privileged": True}
    assert "privileged" not in kubernetes
    assert kubernetes["image"] == "registry.example/vulkan:1"
    assert "runtime_class_name" not in kubernetes
    assert kubernetes["node_selector"] == {"gpuci.runners/dri": "true"}
    assert kubernetes["node_tolerations"] == {"gpuci.runners/dri": "NoSchedule"}
    patch = patches(runner)["gpuci-gpu"]
    assert patch["volumes"] == [{"name": "dev-dri", "hostPath": {"path": "/dev/dri", "type": "Directory"}}]
    assert patch["containers"] == [{"name": "build", "volumeMounts": [{"name": "dev-dri", "mountPath": "/dev/dri"}]}]


def test_dri_pool_default_image():
    assert render({"name": "x", "gpu_class": "dri"})["kubernetes"]["image"] == "ubuntu:24.04"


def test_cpu_pool_stays_off_gpu_nodes():
    runner = render(GOLDEN_POOLS["cpu"])
    kubernetes = runner["kubernetes"]
    assert kubernetes["image"] == "alpine:3.20"
    assert "node_selector" not in kubernetes and "node_tolerations" not in kubernetes
    assert "runtime_class_name" not in kubernetes
    affinity = patches(runner)["gpuci-cpu-only"]["affinity"]
    required = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert required["nodeSelectorTerms"] == CPU_ONLY_TERMS
    assert runner["feature_flags"] == {FLAG: True, DEADLINE_FLAG: True}


def test_cpu_pool_sharing_gpu_nodes_has_no_cpu_only_affinity_and_still_no_gpu():
    runner = render(dict(GOLDEN_POOLS["cpu"], share_gpu_nodes=True,
                         tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]))
    kubernetes = runner["kubernetes"]
    assert "pod_spec" not in kubernetes and "runtime_class_name" not in kubernetes
    assert kubernetes["node_tolerations"] == {"nvidia.com/gpu": "NoSchedule"}
    assert render(dict(GOLDEN_POOLS["cpu"], share_gpu_nodes=False)) == render(GOLDEN_POOLS["cpu"])


def test_extra_config_is_deep_merged_last():
    runner = render(GOLDEN_POOLS["cpu"])
    assert runner["output_limit"] == 16384
    assert runner["kubernetes"]["poll_timeout"] == 600
    assert runner["kubernetes"]["namespace"] == "gitlab-runners"
    runner = render({"name": "x", "extra_config": {"kubernetes": {"image": "busybox"}, "feature_flags": {"FF_X": True}}})
    assert runner["kubernetes"]["image"] == "busybox"
    assert runner["feature_flags"] == {FLAG: True, DEADLINE_FLAG: True, "FF_X": True}


def test_tolerations_map_equal_and_exists():
    pool = {"name": "x", "gpu_class": "l40s", "tolerations": [
        {"key": "ci", "value": "gpu", "effect": "NoSchedule"}, {"key": "spot", "operator": "Exists"}]}
    assert render(pool)["kubernetes"]["node_tolerations"] == {
        "nvidia.com/gpu": "NoSchedule", "ci=gpu": "NoSchedule", "spot": ""}


def test_native_keys_and_pool_node_selector():
    pool = {"name": "x", "gpu_class": "a10", "service_account": "ci", "helper_image": "helper:1",
            "node_selector": {"pool": "ci"}, "runtime_class": ""}
    kubernetes = render(pool)["kubernetes"]
    assert kubernetes["service_account"] == "ci"
    assert kubernetes["helper_image"] == "helper:1"
    assert kubernetes["node_selector"] == {"nvidia.com/gpu.product": "NVIDIA-A10", "pool": "ci"}
    assert "runtime_class_name" not in kubernetes


@pytest.mark.parametrize("pool", [
    {"name": "x", "gpu_class": "l40s", "privileged": True},
    {"name": "x", "gpu_class": "dri", "privileged": True},
    {"name": "x", "privileged": True},  # a CPU pool
], ids=["cuda", "dri", "cpu"])
def test_privileged_scopes_to_the_build_container(pool):
    """GitLab Runner falls back to [runners.kubernetes] privileged for the init-permissions,
    helper and service containers too; only the build container's own context is set."""
    kubernetes = render(pool)["kubernetes"]
    assert kubernetes["build_container_security_context"] == {"privileged": True}
    assert "privileged" not in kubernetes
    for key in ("helper_container_security_context", "service_container_security_context",
                "init_permissions_container_security_context"):
        assert key not in kubernetes
    for patch in patches(render(pool)).values():
        for container in patch.get("containers", []):
            assert "securityContext" not in container


def test_unprivileged_pool_writes_no_privileged_key():
    kubernetes = render({"name": "x", "gpu_class": "l40s", "privileged": False})["kubernetes"]
    assert "privileged" not in kubernetes and "build_container_security_context" not in kubernetes


def test_extra_config_may_scope_privilege_to_services():
    extra = {"kubernetes": {"service_container_security_context": {"privileged": True}}}
    kubernetes = render({"name": "x", "extra_config": extra})["kubernetes"]
    assert kubernetes["service_container_security_context"] == {"privileged": True}
    assert "privileged" not in kubernetes


@pytest.mark.parametrize("runtime_class, expected", [(None, "nvidia"), ("nvidia-cdi", "nvidia-cdi"), ("", None)])
def test_runtime_class_argument_reaches_runtime_class_name(runtime_class, expected):
    """The role passes gpu_operator_runtime_class: the GPU Operator may have made another RuntimeClass."""
    kubernetes = tomllib.loads(gitlab_runner_config({"name": "x", "gpu_class": "l40s"}, runtime_class=runtime_class))[
        "runners"][0]["kubernetes"]
    assert kubernetes.get("runtime_class_name") == expected


def test_pool_runtime_class_wins_and_gpu_access_dri_ignores_the_argument():
    assert render_with({"name": "x", "gpu_class": "l40s", "runtime_class": "mine"}).get("runtime_class_name") == "mine"
    assert "runtime_class_name" not in render_with({"name": "x", "gpu_class": "dri"})
    assert "runtime_class_name" not in render_with({"name": "x"})


def render_with(pool):
    return tomllib.loads(gitlab_runner_config(pool, runtime_class="nvidia-cdi"))["runners"][0]["kubernetes"]


def test_bad_runtime_class_argument():
    with pytest.raises(ValidationError, match=r"^runtime_class: must be a string .*\(got \['nvidia'\]\)"):
        gitlab_runner_config({"name": "x", "gpu_class": "l40s"}, runtime_class=["nvidia"])


def test_rendering_is_deterministic_and_input_untouched():
    pool = copy.deepcopy(GOLDEN_POOLS["cpu"])
    reordered = dict(reversed(list(pool.items())))
    assert gitlab_runner_config(pool) == gitlab_runner_config(reordered)
    assert pool == GOLDEN_POOLS["cpu"]


BAD_POOLS = [
    ([], ["pool:", "mapping", "[]"]),
    ({}, ["pool.name:", "is required"]),
    ({"name": 3}, ["pool.name:", "string", "3"]),
    ({"name": "x", "tokn": "glrt-x"}, ["pool.tokn:", "unknown key"]),
    ({"name": "x", "container": "build"}, ["pool.container:", "unknown key"]),
    ({"name": "x", "gpus": 1}, ["pool.gpus:", "needs gpu_class", "(got 1)"]),
    ({"name": "x", "gpu_access": "dri"}, ["pool.gpu_access:", "needs gpu_class", "'dri'"]),
    ({"name": "x", "lane": "dri"}, ["pool.lane:", "was renamed gpu_access; set pool.gpu_access instead"]),
    ({"name": "x", "gpu_class": "l40s", "gpus": 0}, ["pool.gpus:", "(got 0)"]),
    ({"name": "x", "gpu_class": "l40s", "gpus": False}, ["pool.gpus:", "False"]),
    ({"name": "x", "gpu_class": "t4"}, ["pool.gpu_class:", "'t4'"]),
    ({"name": "x", "gpu_class": "a10", "mig_profile": "1g.5gb"}, ["pool.mig_profile:", "'1g.5gb'"]),
    ({"name": "x", "image": 7}, ["pool.image:", "string", "7"]),
    ({"name": "x", "namespace": ""}, ["pool.namespace:", "empty"]),
    ({"name": "x", "concurrent": 0}, ["pool.concurrent:", ">= 1", "(got 0)"]),
    ({"name": "x", "state": "running"}, ["pool.state:", "present, absent", "'running'"]),
    ({"name": "x", "tags": "gpu"}, ["pool.tags:", "list", "'gpu'"]),
    ({"name": "x", "tags": ["gpu", ""]}, ["pool.tags[1]:", "''"]),
    ({"name": "x", "hpa": 2}, ["pool.hpa:", "mapping", "2"]),
    ({"name": "x", "resources": "big"}, ["pool.resources:", "mapping", "'big'"]),
    ({"name": "x", "cpu_request": True}, ["pool.cpu_request:", "quantity", "True"]),
    ({"name": "x", "memory_limit": [1]}, ["pool.memory_limit:", "quantity", "[1]"]),
    ({"name": "x", "extra_config": "poll_timeout = 5"}, ["pool.extra_config:", "mapping", "'poll_timeout = 5'"]),
    ({"name": "x", "extra_config": {"kubernetes": {"poll_timeout": None}}},
     ["pool.extra_config.kubernetes.poll_timeout:", "TOML", "None"]),
    ({"name": "x", "gpu_class": "l40s", "tolerations": [{"key": "nvidia.com/gpu", "effect": "NoExecute"}]},
     ["pool.tolerations:", "one effect per key", "NoExecute"]),
    ({"name": "x", "privileged": 1}, ["pool.privileged:", "true or false", "1"]),
    ({"name": "x", "gpu_class": "l40s", "share_gpu_nodes": True}, ["pool.share_gpu_nodes:", "without gpu_class", "True"]),
    ({"name": "x", "share_gpu_nodes": "yes"}, ["pool.share_gpu_nodes:", "'yes'"]),
    ({"name": "x", "extra_config": {"name": "other"}}, ["pool.extra_config.name:", "pool's name", "'other'"]),
    ({"name": "x", "extra_config": {"kubernetes": {"privileged": True}}},
     ["pool.extra_config.kubernetes.privileged:", "every container of the job pod", "privileged: true", "True"]),
    ({"name": "x", "extra_config": {"feature_flags": {FLAG: False}}},
     [f"pool.extra_config.feature_flags.{FLAG}:", "must stay true", "pod_spec", "False"]),
    ({"name": "x", "extra_config": {"feature_flags": {FLAG: "yes"}}}, [f"pool.extra_config.feature_flags.{FLAG}:", "'yes'"]),
    ({"name": "x", "extra_config": {"feature_flags": {DEADLINE_FLAG: False}}},
     [f"pool.extra_config.feature_flags.{DEADLINE_FLAG}:", "must stay true", "holding its GPU", "timeout"]),
    ({"name": "x", "extra_config": {"feature_flags": "FF_X"}}, ["pool.extra_config.feature_flags:", "mapping", "'FF_X'"]),
]


@pytest.mark.parametrize("pool, expected", BAD_POOLS)
def test_bad_pool(pool, expected):
    with pytest.raises(ValidationError) as error:
        gitlab_runner_config(pool)
    for text in expected:
        assert text in str(error.value)


@pytest.mark.parametrize("token", [123, ""])
def test_bad_token_is_not_echoed(token):
    with pytest.raises(ValidationError) as error:
        gitlab_runner_config({"name": "x", "token": token})
    assert str(error.value).startswith("pool.token:")
    assert "123" not in str(error.value)


def test_pool_configs_renders_the_present_pools_and_names_each_bad_one_by_its_inventory_path():
    pools = [GOLDEN_POOLS["cpu"], {"name": "gone", "state": "absent", "gpus": "many"},
             {"name": "bad", "gpu_class": "l40s", "gpus": 0}, GOLDEN_POOLS["dri"]]
    configs, problems = pool_configs(pools, key="gitlab_runner_pools")
    assert sorted(configs) == [0, 3]
    assert configs[0] == gitlab_runner_config(GOLDEN_POOLS["cpu"])
    assert list(problems) == [2]
    assert problems[2].startswith("gitlab_runner_pools[name=bad].gpus: ")
