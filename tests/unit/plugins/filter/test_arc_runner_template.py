# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ARC templates are checked as data, and as YAML golden files parsed back."""

import copy

import pytest
import yaml

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.runner_template import arc_runner_template, scale_set_templates
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}
HOOK_ENV = "ACTIONS_RUNNER_CONTAINER_HOOK_TEMPLATE"

GOLDEN_SCALE_SETS = {
    "a10-default": {"name": "gpu-a10", "gpu_class": "a10", "github_config_url": "https://github.com/example",
                    "github_token": "ghp_SECRET", "min_runners": 0, "max_runners": 2, "labels": ["gpu", "a10"]},
    "l40s-dind": {"name": "gpu-l40s", "gpu_class": "l40s", "gpus": 2, "container_mode": "dind",
                  "runner_image": "ghcr.io/actions/actions-runner:2.329.0"},
    "a100-kubernetes-mig": {"name": "gpu-a100", "gpu_class": "a100", "mig_profile": "1g.10gb",
                            "container_mode": "kubernetes",
                            "work_volume_claim": {"storage_class": "local-path", "size": "10Gi",
                                                  "access_modes": ["ReadWriteOnce"]},
                            "github_app_id": 123, "github_app_installation_id": "456",
                            "github_app_private_key": "-----BEGIN KEY----- SECRET"},
    "dri-kubernetes": {"name": "tinyland-nix-gpu", "gpu_class": "dri", "container_mode": "kubernetes", "privileged": True},
    "cpu": {"name": "cpu-small", "namespace": "arc-runners"},
}


def runner_container(template):
    (runner,) = [c for c in template["spec"]["containers"] if c["name"] == "runner"]
    assert runner["command"] == ["/home/runner/run.sh"]
    return runner


@pytest.mark.parametrize("case", sorted(GOLDEN_SCALE_SETS))
def test_golden(case, golden_yaml):
    result = arc_runner_template(GOLDEN_SCALE_SETS[case])
    parsed = golden_yaml("arc/%s.yaml" % case, result)
    assert parsed == result
    if parsed["hook_template"] is not None:
        for text in parsed["hook_template"]["data"].values():
            yaml.safe_load(text)


def test_default_mode_puts_the_gpu_on_the_runner():
    result = arc_runner_template(GOLDEN_SCALE_SETS["a10-default"])
    assert result["hook_template"] is None
    spec = result["template"]["spec"]
    runner = runner_container(result["template"])
    assert runner["image"] == "ghcr.io/actions/actions-runner:2.329.0"
    assert runner["resources"] == {"requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}
    assert "securityContext" not in runner
    assert spec["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-A10"}
    assert spec["tolerations"] == [GPU_TOLERATION]
    assert spec["runtimeClassName"] == "nvidia"


def test_dind_mode_also_puts_the_gpu_on_the_runner():
    result = arc_runner_template(GOLDEN_SCALE_SETS["l40s-dind"])
    assert result["hook_template"] is None
    assert runner_container(result["template"])["resources"]["limits"] == {"nvidia.com/gpu": "2"}


def test_secrets_never_reach_the_output():
    for scale_set in GOLDEN_SCALE_SETS.values():
        text = yaml.safe_dump(arc_runner_template(scale_set))
        assert "SECRET" not in text


def test_kubernetes_mode_gives_the_gpu_to_the_job_pod():
    result = arc_runner_template(GOLDEN_SCALE_SETS["a100-kubernetes-mig"])
    hook = result["hook_template"]
    assert hook["configmap_name"] == "gpu-a100-hook-template"
    assert hook["env_path"] == "/home/runner/pod-templates/job-template.yaml"
    job_pod = yaml.safe_load(hook["data"]["job-template.yaml"])
    (job,) = job_pod["spec"]["containers"]
    assert job["name"] == "$job"
    assert job["resources"] == {"requests": {"nvidia.com/mig-1g.10gb": "1"}, "limits": {"nvidia.com/mig-1g.10gb": "1"}}
    assert job_pod["spec"]["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}
    assert job_pod["spec"]["tolerations"] == [GPU_TOLERATION]
    assert job_pod["spec"]["runtimeClassName"] == "nvidia"

    spec = result["template"]["spec"]
    runner = runner_container(result["template"])
    assert "resources" not in runner
    assert runner["env"] == [{"name": HOOK_ENV, "value": hook["env_path"]}]
    assert runner["volumeMounts"] == [{"name": "hook-template", "mountPath": "/home/runner/pod-templates", "readOnly": True}]
    assert spec["volumes"] == [{"name": "hook-template", "configMap": {"name": "gpu-a100-hook-template"}}]
    # The runner pod sits on the same nodes as its job pod, without the GPU runtime.
    assert spec["nodeSelector"] == job_pod["spec"]["nodeSelector"]
    assert spec["tolerations"] == job_pod["spec"]["tolerations"]
    assert "runtimeClassName" not in spec


@pytest.mark.parametrize("runtime_class, expected", [(None, "nvidia"), ("nvidia-cdi", "nvidia-cdi"), ("", None)])
def test_runtime_class_argument_reaches_runtime_class_name(runtime_class, expected):
    spec = arc_runner_template({"name": "x", "gpu_class": "a10"}, runtime_class=runtime_class)["template"]["spec"]
    assert spec.get("runtimeClassName") == expected
    hook = arc_runner_template({"name": "x", "gpu_class": "a10", "container_mode": "kubernetes"},
                               runtime_class=runtime_class)["hook_template"]
    job_pod = yaml.safe_load(hook["data"]["job-template.yaml"])
    assert job_pod["spec"].get("runtimeClassName") == expected


def test_scale_set_runtime_class_wins_over_the_argument():
    spec = arc_runner_template({"name": "x", "gpu_class": "a10", "runtime_class": "mine"}, runtime_class="nvidia-cdi")
    assert spec["template"]["spec"]["runtimeClassName"] == "mine"


def test_kubernetes_mode_dri_mounts_into_the_job_container():
    result = arc_runner_template(GOLDEN_SCALE_SETS["dri-kubernetes"])
    job_pod = yaml.safe_load(result["hook_template"]["data"]["job-template.yaml"])
    (job,) = job_pod["spec"]["containers"]
    assert job["volumeMounts"] == [{"name": "dev-dri", "mountPath": "/dev/dri"}]
    assert job["securityContext"] == {"privileged": True}
    assert "resources" not in job
    assert job_pod["spec"]["volumes"] == [{"name": "dev-dri", "hostPath": {"path": "/dev/dri", "type": "Directory"}}]
    assert "runtimeClassName" not in job_pod["spec"]
    runner = runner_container(result["template"])
    assert "securityContext" not in runner
    assert result["template"]["spec"]["nodeSelector"] == {"gpuci.runners/dri": "true"}


def test_default_mode_dri_mounts_into_the_runner():
    result = arc_runner_template({"name": "vulkan", "gpu_class": "dri"})
    runner = runner_container(result["template"])
    assert runner["volumeMounts"] == [{"name": "dev-dri", "mountPath": "/dev/dri"}]
    assert result["template"]["spec"]["volumes"] == [
        {"name": "dev-dri", "hostPath": {"path": "/dev/dri", "type": "Directory"}}]


def test_cpu_scale_set_stays_off_gpu_nodes():
    result = arc_runner_template(GOLDEN_SCALE_SETS["cpu"])
    spec = result["template"]["spec"]
    terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert {e["key"] for e in terms[0]["matchExpressions"]} == {"nvidia.com/gpu.present", "gpuci.runners/dri"}
    assert "resources" not in runner_container(result["template"])
    assert "nodeSelector" not in spec and "runtimeClassName" not in spec


def test_cpu_scale_set_in_kubernetes_mode():
    result = arc_runner_template({"name": "cpu", "container_mode": "kubernetes"})
    job_pod = yaml.safe_load(result["hook_template"]["data"]["job-template.yaml"])
    assert "affinity" in job_pod["spec"] and "affinity" in result["template"]["spec"]
    assert job_pod["spec"]["containers"] == [{"name": "$job"}]


def test_input_untouched():
    scale_set = copy.deepcopy(GOLDEN_SCALE_SETS["a100-kubernetes-mig"])
    arc_runner_template(scale_set)
    assert scale_set == GOLDEN_SCALE_SETS["a100-kubernetes-mig"]


BAD_SCALE_SETS = [
    ("gpu", ["scale_set:", "mapping", "'gpu'"]),
    ({}, ["scale_set.name:", "is required"]),
    ({"name": "GPU_A10"}, ["scale_set.name:", "DNS label", "'GPU_A10'"]),
    ({"name": "a" * 46}, ["scale_set.name:", "45", "'aaaa"]),
    ({"name": "x", "containerMode": "dind"}, ["scale_set.containerMode:", "unknown key"]),
    ({"name": "x", "container_mode": "docker"}, ["scale_set.container_mode:", "none, dind, kubernetes", "'docker'"]),
    ({"name": "x", "gpu_class": "l40s", "gpus": "2"}, ["scale_set.gpus:", "'2'"]),
    ({"name": "x", "gpu_class": "a10", "mig_profile": "1g.10gb"}, ["scale_set.mig_profile:", "'1g.10gb'"]),
    ({"name": "x", "gpu_class": "a10", "gpu_access": "dri"}, ["scale_set.gpu_access:", "'dri'"]),
    ({"name": "x", "gpus": 1}, ["scale_set.gpus:", "needs gpu_class"]),
    ({"name": "x", "min_runners": -1}, ["scale_set.min_runners:", "(got -1)"]),
    ({"name": "x", "min_runners": 3, "max_runners": 2}, ["scale_set.min_runners:", "must not exceed max_runners (2)", "(got 3)"]),
    ({"name": "x", "max_runners": "5"}, ["scale_set.max_runners:", "'5'"]),
    ({"name": "x", "labels": "gpu"}, ["scale_set.labels:", "list", "'gpu'"]),
    ({"name": "x", "labels": ["l" * 256]}, ["scale_set.labels[0]:", "256"]),
    ({"name": "x", "github_app_id": True}, ["scale_set.github_app_id:", "True"]),
    ({"name": "x", "github_config_url": 5}, ["scale_set.github_config_url:", "5"]),
    ({"name": "x", "runner_image": ["img"]}, ["scale_set.runner_image:", "['img']"]),
    ({"name": "x", "state": "gone"}, ["scale_set.state:", "'gone'"]),
    ({"name": "x", "work_volume_claim": "10Gi"}, ["scale_set.work_volume_claim:", "mapping", "'10Gi'"]),
    ({"name": "x", "work_volume_claim": {"storageClassName": "x"}}, ["scale_set.work_volume_claim.storageClassName:", "unknown key"]),
    ({"name": "x", "work_volume_claim": {"size": True}}, ["scale_set.work_volume_claim.size:", "True"]),
    ({"name": "x", "work_volume_claim": {"size": "1Gi", "access_modes": "RWO"}}, ["scale_set.work_volume_claim.access_modes:", "'RWO'"]),
    ({"name": "x", "work_volume_claim": {"storage_class": "fast"}}, ["scale_set.work_volume_claim.size: is required"]),
    ({"name": "x", "gpu_class": "l40s", "tolerations": [{"key": "a", "effect": "Sometimes"}]},
     ["scale_set.tolerations[0].effect:", "'Sometimes'"]),
]


@pytest.mark.parametrize("scale_set, expected", BAD_SCALE_SETS)
def test_bad_scale_set(scale_set, expected):
    with pytest.raises(ValidationError) as error:
        arc_runner_template(scale_set)
    for text in expected:
        assert text in str(error.value)


@pytest.mark.parametrize("key", ["github_token", "github_app_private_key"])
def test_bad_secret_is_not_echoed(key):
    with pytest.raises(ValidationError) as error:
        arc_runner_template({"name": "x", key: 98765})
    assert str(error.value).startswith("scale_set.%s:" % key)
    assert "98765" not in str(error.value)


def test_scale_set_templates_renders_the_present_ones_and_names_each_bad_one_by_its_inventory_path():
    good = {"name": "cpu"}
    scale_sets = [good, {"name": "gone", "state": "absent", "gpus": "many"}, {"name": "bad", "gpu_class": "l40s", "gpus": 0}]
    templates, problems = scale_set_templates(scale_sets, key="arc_runners_scale_sets")
    assert list(templates) == [0] and templates[0] == arc_runner_template(good)
    assert list(problems) == [2]
    assert problems[2].startswith("arc_runners_scale_sets[name=bad].gpus: ")
