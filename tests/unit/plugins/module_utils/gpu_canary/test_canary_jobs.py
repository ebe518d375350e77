# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""canary_jobs: a lane with a node -> its Job, the pod placed by the runners' own pod patch."""
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.filter.canary_jobs import FilterModule
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.checks import CHECKS, CONTAINER
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.jobs import LANE_LABEL, canary_jobs
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.lanes import canary_lanes
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.config import DEFAULT_IMAGES
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.pod_patch import gpu_pod_patch

LABELS = {"app.kubernetes.io/component": "gpu-canary", "app.kubernetes.io/part-of": "gpuci-runners"}
IMAGES = {"cuda": "nvidia/cuda:12.4.1-base-ubuntu22.04", "dri": "ubuntu:24.04"}
POOLS = [{"name": "l40s", "gpu_class": "l40s", "gpus": 2, "tags": ["l40s"]},
         {"name": "vulkan", "gpu_class": "dri", "gpu_access": "dri"}]
READY = {"ok": True, "reason": "", "matching": ["n"], "schedulable": ["n"], "simulated": []}


def lanes(ready=("l40s-cuda-2gpu", "dri-dri")):
    result = canary_lanes({"gitlab_pools": POOLS, "gitlab_runtime_class": "nvidia",
                           "setup_commands": {"dri": ["apt-get install -y vulkan-tools"]}})
    for lane in result:
        lane["node_check"] = READY if lane["name"] in ready else dict(READY, ok=False, reason="no node")
    return result


def jobs(lanes_, **extra):
    return canary_jobs(dict({"lanes": lanes_, "namespace": "gpu-canary", "labels": LABELS, "images": IMAGES,
                             "image_pull_secrets": [{"name": "mirror"}], "deadline": 660, "ttl": 600}, **extra))


def test_a_job_per_lane_with_a_node_named_and_labelled_by_its_lane():
    built = jobs(lanes(ready=("dri-dri",)))
    assert [job["metadata"]["name"] for job in built] == ["gpu-canary-dri-dri"]
    (job,) = built
    assert job["metadata"]["namespace"] == "gpu-canary"
    assert job["metadata"]["labels"] == dict(LABELS, **{LANE_LABEL: "dri-dri"})
    assert job["spec"]["template"]["metadata"]["labels"] == job["metadata"]["labels"]
    assert (job["spec"]["backoffLimit"], job["spec"]["activeDeadlineSeconds"], job["spec"]["ttlSecondsAfterFinished"]) \
        == (0, 660, 600)


def test_the_pod_carries_the_runners_patch_on_the_canary_container():
    (lane,) = [lane for lane in lanes() if lane["name"] == "l40s-cuda-2gpu"]
    (job,) = jobs([lane])
    pod = job["spec"]["template"]["spec"]
    patch = gpu_pod_patch(dict(lane["pod_request"], container=CONTAINER))
    for key in set(patch) - {"containers"}:
        assert pod[key] == patch[key], key
    assert pod["runtimeClassName"] == "nvidia"
    (container,) = pod["containers"]
    assert container["resources"] == patch["containers"][0]["resources"]
    assert container["resources"]["limits"]["nvidia.com/gpu"] == "2"
    assert container["image"] == IMAGES["cuda"]
    assert pod["restartPolicy"] == "Never" and pod["automountServiceAccountToken"] is False
    assert pod["imagePullSecrets"] == [{"name": "mirror"}]


def test_the_container_runs_the_lanes_commands_as_one_shell_line():
    (job,) = [j for j in jobs(lanes()) if j["metadata"]["name"] == "gpu-canary-dri-dri"]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    shell, flag, line = container["command"]
    assert (shell, flag) == ("/bin/sh", "-c") and "\n" not in line
    assert line == "; ".join(["set -e", "apt-get install -y vulkan-tools"] + CHECKS["dri"]["commands"])
    assert container["image"] == IMAGES["dri"]


@pytest.mark.parametrize("extra, message", [
    ({"images": {"cuda": "x"}}, r"canary_jobs.images.dri: is required by lane dri-dri"),
    ({"deadline": 0}, r"canary_jobs.deadline"),
    ({"labels": {"team": True}}, r"canary_jobs.labels.team: must be a string"),
    ({"lane": []}, r"canary_jobs.lane: unknown key"),
])
def test_bad_input_is_named_through_the_filter(extra, message):
    build = FilterModule().filters()["canary_jobs"]
    spec = {"lanes": lanes(), "namespace": "gpu-canary", "labels": LABELS, "images": IMAGES,
            "image_pull_secrets": [], "deadline": 660, "ttl": 600}
    spec.update(extra)
    with pytest.raises(AnsibleFilterError, match="gpuci.runners.canary_jobs: " + message):
        build(spec)


def test_the_canary_runs_in_the_images_gitlab_pools_jobs_get_by_default(role_options):
    """The role's default images are written in YAML (defaults, argument specs) for users to read; they must be
    the images module_utils/gitlab_runner/config.py gives a pool's jobs when the pool names none."""
    role = Path(__file__).resolve().parents[5] / "roles" / "gpu_canary"
    defaults = yaml.safe_load((role / "defaults" / "main.yml").read_text())["gpu_canary_images"]
    gpu_images = {access: image for access, image in DEFAULT_IMAGES.items() if access is not None}  # not CPU pools'
    assert defaults == role_options("gpu_canary")["gpu_canary_images"]["default"] == gpu_images
