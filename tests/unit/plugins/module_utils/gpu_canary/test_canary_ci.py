# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""canary_ci: the lanes -> a GitLab job per GPU pool and a workflow per scale set, running the lane's commands."""
import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.filter.canary_ci import FilterModule
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.ci_snippets import canary_ci
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.lanes import canary_lanes

IMAGES = {"cuda": "nvidia/cuda:12.4.1-base-ubuntu22.04", "dri": "ubuntu:24.04"}
POOLS = [{"name": "l40s", "gpu_class": "l40s", "tags": ["gpu", "l40s"]},
         {"name": "l40s-big", "gpu_class": "l40s", "tags": ["gpu"]},
         {"name": "cpu", "gpus": 0}]
SCALE_SETS = [{"name": "a10", "gpu_class": "a10", "runner_group": "GPUs"},
              {"name": "vulkan", "gpu_class": "dri", "gpu_access": "dri"},
              {"name": "l40s-arc", "gpu_class": "l40s", "container_mode": "kubernetes"}]


def lanes():
    return canary_lanes({"gitlab_pools": POOLS, "arc_scale_sets": SCALE_SETS,
                         "setup_commands": {"dri": ["apt-get install -y vulkan-tools"]}})


def snippets(**extra):
    return canary_ci(dict({"lanes": lanes(), "images": IMAGES, "job_timeout": 600}, **extra))


def lane_of(kind, name):
    return next(lane for lane in lanes() if name in [entry["name"] for entry in lane[kind]])


def test_one_gitlab_job_per_gpu_pool_picked_by_its_tags():
    jobs = snippets()["gitlab_jobs"]
    # Two pools share the l40s lane and each gets its own job; the pool without a GPU none.
    assert set(jobs) == {"gpu-canary-l40s", "gpu-canary-l40s-big"}
    # No GIT_STRATEGY: the jobs clone the project as users' jobs do.
    assert jobs["gpu-canary-l40s"] == {"tags": ["gpu", "l40s"], "image": IMAGES["cuda"],
                                       "script": lane_of("gitlab_pools", "l40s")["commands"]}
    assert jobs["gpu-canary-l40s-big"]["tags"] == ["gpu"]
    assert any("nvidia-smi" in line for line in jobs["gpu-canary-l40s"]["script"])


def test_a_pool_s_own_image_wins_over_the_canary_image():
    pools = [dict(POOLS[0], image="mirror.example/cuda:12"), POOLS[1]]
    lanes_ = canary_lanes({"gitlab_pools": pools})
    jobs = canary_ci({"lanes": lanes_, "images": IMAGES, "job_timeout": 600})["gitlab_jobs"]
    assert jobs["gpu-canary-l40s"]["image"] == "mirror.example/cuda:12"
    assert jobs["gpu-canary-l40s-big"]["image"] == IMAGES["cuda"]


def test_cpu_lanes_give_each_cpu_pool_a_job_on_its_image_or_the_runner_s_default():
    pools = POOLS + [{"name": "cpu-debian", "tags": ["cpu", "debian"], "image": "debian:bookworm"},
                     {"name": "gone", "tags": ["old"], "state": "absent"}]
    lanes_ = canary_lanes({"gitlab_pools": pools, "cpu_lanes": True})
    jobs = canary_ci({"lanes": lanes_, "images": IMAGES, "job_timeout": 600})["gitlab_jobs"]
    assert jobs["gpu-canary-cpu-debian"] == {
        "tags": ["cpu", "debian"], "image": "debian:bookworm", "script": lanes_[-1]["commands"]}
    assert jobs["gpu-canary-cpu"] == {"tags": [], "script": lanes_[-1]["commands"]}, "no image: the runner's default"
    assert "gpu-canary-gone" not in jobs
    assert any("gpu-canary: CPU job ran on" in line for line in jobs["gpu-canary-cpu"]["script"])


def test_one_workflow_per_scale_set_runs_on_its_name_or_its_group():
    workflows = snippets()["workflows"]
    assert set(workflows) == {"a10", "vulkan", "l40s-arc"}
    assert workflows["vulkan"]["jobs"]["gpu-canary"]["runs-on"] == "vulkan"
    assert workflows["a10"]["jobs"]["gpu-canary"]["runs-on"] == {"group": "GPUs", "labels": ["a10"]}
    vulkan = workflows["vulkan"]
    assert vulkan["name"] == "GPU canary (vulkan)"
    assert set(vulkan["on"]) == {"workflow_dispatch", "schedule"}
    assert vulkan["permissions"] == {"contents": "read"}
    steps = vulkan["jobs"]["gpu-canary"]["steps"]
    assert steps == [{"run": command} for command in lane_of("arc_scale_sets", "vulkan")["commands"]]
    assert steps[0] == {"run": "apt-get install -y vulkan-tools"}


def test_only_kubernetes_container_mode_names_the_image():
    workflows = snippets()["workflows"]
    assert workflows["l40s-arc"]["jobs"]["gpu-canary"]["container"] == {"image": IMAGES["cuda"]}
    assert "container" not in workflows["a10"]["jobs"]["gpu-canary"]


@pytest.mark.parametrize("seconds, minutes", [(600, 10), (601, 11), (59, 1)])
def test_the_workflow_timeout_is_the_lane_timeout_rounded_up_to_minutes(seconds, minutes):
    workflows = snippets(job_timeout=seconds)["workflows"]
    assert {w["jobs"]["gpu-canary"]["timeout-minutes"] for w in workflows.values()} == {minutes}


def test_no_lanes_no_snippets():
    assert canary_ci({"lanes": [], "images": IMAGES, "job_timeout": 600}) == {
        "gitlab_jobs": {}, "workflows": {}, "workflow_files": [], "workflow_file_names": []}


def test_each_workflow_has_its_file_named_after_the_scale_set():
    result = snippets()
    assert result["workflow_file_names"] == ["gpu-canary-%s.yml" % name for name in result["workflows"]]
    assert result["workflow_file_names"]
    for entry in result["workflow_files"]:
        name = entry["name"][len("gpu-canary-"):-len(".yml")]
        assert entry["workflow"] == result["workflows"][name]
        assert entry["header"] == "GPU canary generated by gpuci.runners.gpu_canary for the scale set %s." % name


def test_a_lane_without_an_image_is_refused_by_the_filter():
    with pytest.raises(AnsibleFilterError, match=r"canary_ci\.images\.dri: is required by lane dri-dri"):
        FilterModule().filters()["canary_ci"]({"lanes": lanes(), "images": {"cuda": "c"}, "job_timeout": 600})


def test_unknown_input_is_refused():
    with pytest.raises(AnsibleFilterError, match="canary_ci"):
        FilterModule().filters()["canary_ci"]({"lanes": [], "images": IMAGES, "job_timeout": 600, "jobs": 1})
