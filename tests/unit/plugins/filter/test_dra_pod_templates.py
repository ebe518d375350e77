# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A DRA pool's job pods: GitLab's pod_spec patch and ARC's templates name the claim on the GPU container only."""
import json

import yaml

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.runner_template import arc_runner_template
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.config import gitlab_runner_document

CLAIMS = [{"name": "gpu", "resourceClaimTemplateName": "h200-dra-gpu"}]
CONTAINER_CLAIMS = {"claims": [{"name": "gpu"}]}


def gitlab_patches(pool):
    kubernetes = gitlab_runner_document(pool)["runners"][0]["kubernetes"]
    return kubernetes, [json.loads(entry["patch"]) for entry in kubernetes.get("pod_spec", [])]


def test_a_gitlab_dra_pool_claims_for_the_build_container_only():
    kubernetes, (patch,) = gitlab_patches({"name": "h200-dra", "gpu_class": "h200", "gpu_allocation": "dra", "gpus": 2})
    assert patch["resourceClaims"] == CLAIMS
    assert patch["containers"] == [{"name": "build", "resources": CONTAINER_CLAIMS}]  # not "helper"
    # No device plugin resource anywhere, and no NVIDIA runtime class: the claim's CDI devices need none.
    assert "nvidia.com/gpu" not in json.dumps(kubernetes.get("pod_spec"))
    assert "runtime_class_name" not in kubernetes
    assert kubernetes["node_selector"] == {"nvidia.com/gpu.product": "NVIDIA-H200"}


def test_a_gitlab_device_plugin_pool_renders_as_before():
    kubernetes, (patch,) = gitlab_patches({"name": "h200", "gpu_class": "h200"})
    assert patch == {"containers": [{"name": "build", "resources": {
        "requests": {"nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}}]}


def test_an_arc_dra_scale_set_claims_for_the_runner_container():
    spec = arc_runner_template({"name": "h200-dra", "gpu_class": "h200", "gpu_allocation": "dra"})["template"]["spec"]
    assert spec["resourceClaims"] == CLAIMS
    (runner,) = spec["containers"]
    assert runner["name"] == "runner"
    assert runner["resources"] == CONTAINER_CLAIMS
    assert "runtimeClassName" not in spec


def test_in_kubernetes_mode_the_job_pod_claims_and_the_runner_pod_does_not():
    rendered = arc_runner_template(
        {"name": "h200-dra", "gpu_class": "h200", "gpu_allocation": "dra", "container_mode": "kubernetes"})
    runner_spec = rendered["template"]["spec"]
    assert "resourceClaims" not in runner_spec
    assert all("resources" not in container for container in runner_spec["containers"])
    job_spec = yaml.safe_load(rendered["hook_template"]["data"]["job-template.yaml"])["spec"]
    assert job_spec["resourceClaims"] == CLAIMS
    assert job_spec["containers"] == [{"name": "$job", "resources": CONTAINER_CLAIMS}]
    # Both on the class's nodes: the runner pod's work volume is the job pod's.
    assert runner_spec["nodeSelector"] == job_spec["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-H200"}
