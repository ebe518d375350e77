# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""canary_lanes: pools and scale sets -> the distinct GPU lanes the canary proves."""
import copy
import json

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.checks import CHECKS, JOB_PREFIX, MIG_PROFILE
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.lanes import canary_lanes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.pod_patch import gpu_pod_patch
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

TOKEN = "glrt-must-never-leak"
POOLS = [
    {"name": "l40s", "gpu_class": "l40s", "gpus": 1, "tags": ["gpu", "l40s"], "token": TOKEN},
    {"name": "l40s-big", "gpu_class": "l40s", "gpus": 1, "concurrent": 8, "tags": ["gpu", "big"], "token": TOKEN},
    {"name": "a100-mig", "gpu_class": "a100", "mig_profile": "1g.10gb", "tags": ["a100"], "token": TOKEN},
    {"name": "cpu", "tags": ["cpu"], "token": TOKEN},
    {"name": "gone", "gpu_class": "a10", "state": "absent", "token": TOKEN},
]
SCALE_SETS = [
    {"name": "arc-l40s", "gpu_class": "l40s", "runner_group": "GPUs", "github_token": TOKEN},
    {"name": "arc-vulkan", "gpu_class": "dri", "gpu_access": "dri", "labels": ["vulkan"], "github_app_private_key": TOKEN},
]


def node(name, labels=None, allocatable=None, simulated=False, cordoned=False):
    annotations = {"kwok.x-k8s.io/node": "fake"} if simulated else {}
    return {"metadata": {"name": name, "labels": labels or {}, "annotations": annotations},
            "spec": {"unschedulable": True} if cordoned else {},
            "status": {"allocatable": allocatable or {}}}


L40S_NODE = node("l40s-0", {"nvidia.com/gpu.product": "NVIDIA-L40S"}, {"nvidia.com/gpu": "4"}, simulated=True)
A100_NODE = node("a100-0", {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"},
                 {"nvidia.com/gpu": "2", "nvidia.com/mig-1g.10gb": "7"})
DRI_NODE = node("dri-0", {"gpuci.runners/dri": "true"})


def lanes(**extra):
    return canary_lanes(dict({"gitlab_pools": POOLS, "arc_scale_sets": SCALE_SETS}, **extra))


def by_name(result):
    return {lane["name"]: lane for lane in result}


def test_same_request_is_one_lane_serving_every_pool():
    result = by_name(lanes())
    assert list(result) == ["l40s-cuda-1gpu", "a100-cuda-mig-1g-10gb", "dri-dri"]
    l40s = result["l40s-cuda-1gpu"]
    assert [p["name"] for p in l40s["gitlab_pools"]] == ["l40s", "l40s-big"]
    assert l40s["arc_scale_sets"] == [{"name": "arc-l40s", "runner_group": "GPUs", "labels": [], "container_mode": "none"}]
    assert (l40s["resource"], l40s["count"], l40s["check"], l40s["runtime_class"]) == ("nvidia.com/gpu", 1, "nvidia-smi", "nvidia")
    assert [lane["gpu_access"] for lane in result.values()] == ["cuda", "cuda", "dri"]


def test_mig_and_dri_lanes_say_what_they_request_and_check():
    result = by_name(lanes())
    mig = result["a100-cuda-mig-1g-10gb"]
    assert (mig["resource"], mig["request_text"], mig["check"], mig["gpus"]) == (
        "nvidia.com/mig-1g.10gb", "nvidia.com/mig-1g.10gb: 1", "mig", None)
    dri = result["dri-dri"]
    assert (dri["resource"], dri["check"], dri["runtime_class"], dri["request_text"]) == (None, "dri", None, "host /dev/dri")
    assert dri["arc_scale_sets"][0]["labels"] == ["vulkan"]


def test_cpu_and_absent_pools_have_no_lane():
    served = [p["name"] for lane in lanes() for p in lane["gitlab_pools"]]
    assert "cpu" not in served and "gone" not in served


def test_different_amounts_and_placements_are_different_lanes():
    pools = [{"name": "one", "gpu_class": "l40s"}, {"name": "two", "gpu_class": "l40s", "gpus": 2},
             {"name": "pinned", "gpu_class": "l40s", "node_selector": {"pool": "ci"}}]
    assert [lane["name"] for lane in canary_lanes({"gitlab_pools": pools})] == [
        "l40s-cuda-1gpu", "l40s-cuda-2gpu", "l40s-cuda-1gpu-2"]


def test_pod_request_gives_the_runner_roles_patch():
    lane = by_name(lanes())["a100-cuda-mig-1g-10gb"]
    assert gpu_pod_patch(dict(lane["pod_request"], container="canary")) == gpu_pod_patch(
        {"gpu_class": "a100", "mig_profile": "1g.10gb", "container": "canary"})


def test_runtime_class_of_each_role_reaches_the_canary_pod_patch():
    """The canary pod must run as the runners' job pods do, whatever RuntimeClass the GPU Operator made."""
    result = by_name(lanes(gitlab_runtime_class="nvidia-cdi", arc_runtime_class="nvidia-arc"))
    # Same request, different runtime classes: the GitLab pools and the scale set are separate lanes now.
    gitlab, arc = result["l40s-cuda-1gpu"], result["l40s-cuda-1gpu-2"]
    assert ([p["name"] for p in gitlab["gitlab_pools"]], gitlab["arc_scale_sets"]) == (["l40s", "l40s-big"], [])
    assert [s["name"] for s in arc["arc_scale_sets"]] == ["arc-l40s"]
    for lane, wanted in ((gitlab, "nvidia-cdi"), (arc, "nvidia-arc")):
        assert lane["runtime_class"] == wanted
        patch = gpu_pod_patch(dict(lane["pod_request"], container="canary"))
        assert patch["runtimeClassName"] == wanted
    assert "runtimeClassName" not in gpu_pod_patch(dict(result["dri-dri"]["pod_request"], container="canary"))


def test_no_runtime_class_for_a_role_reaches_the_canary_pod_patch():
    lane = by_name(lanes(gitlab_runtime_class="", arc_runtime_class=""))["l40s-cuda-1gpu"]
    assert lane["runtime_class"] is None
    assert "runtimeClassName" not in gpu_pod_patch(dict(lane["pod_request"], container="canary"))


def test_node_check_wants_the_roles_runtime_class():
    result = by_name(lanes(gitlab_runtime_class="nvidia-cdi", arc_runtime_class="nvidia-cdi",
                           nodes=[L40S_NODE], runtime_classes=["nvidia"]))
    assert result["l40s-cuda-1gpu"]["node_check"]["reason"] == (
        "RuntimeClass nvidia-cdi does not exist (the GPU Operator's toolkit creates it)")


def test_no_secret_reaches_a_lane_and_inputs_are_untouched():
    pools, scale_sets = copy.deepcopy(POOLS), copy.deepcopy(SCALE_SETS)
    result = canary_lanes({"gitlab_pools": pools, "arc_scale_sets": scale_sets, "nodes": [L40S_NODE]})
    assert TOKEN not in json.dumps(result)
    assert (pools, scale_sets) == (POOLS, SCALE_SETS)


def test_node_check_finds_nodes_and_marks_simulated_ones():
    result = by_name(lanes(nodes=[L40S_NODE, A100_NODE, DRI_NODE], runtime_classes=["nvidia"]))
    assert result["l40s-cuda-1gpu"]["node_check"] == {
        "ok": True, "reason": "", "matching": ["l40s-0"], "schedulable": ["l40s-0"], "simulated": ["l40s-0"]}
    assert result["a100-cuda-mig-1g-10gb"]["node_check"]["ok"]
    assert result["a100-cuda-mig-1g-10gb"]["node_check"]["simulated"] == []
    assert result["dri-dri"]["node_check"]["schedulable"] == ["dri-0"]


def test_simulated_label_counts_like_the_kwok_annotation():
    labelled = node("x", {"nvidia.com/gpu.product": "NVIDIA-L40S", "gpuci.runners/simulated": "true"},
                    {"nvidia.com/gpu": "1"})
    (lane,) = canary_lanes({"gitlab_pools": POOLS[:1], "nodes": [labelled], "runtime_classes": ["nvidia"]})
    assert lane["node_check"]["simulated"] == ["x"]


def test_class_without_nodes_has_no_schedulable_node():
    (lane,) = canary_lanes({"gitlab_pools": [{"name": "h", "gpu_class": "h100"}], "nodes": [L40S_NODE],
                            "runtime_classes": ["nvidia"]})
    assert not lane["node_check"]["ok"]
    assert lane["node_check"]["reason"] == (
        "no schedulable node: no node matches the selector nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3")


@pytest.mark.parametrize("bad_node", [
    node("a100-0", {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}, {"nvidia.com/gpu": "2"}),
    node("a100-0", {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}, {"nvidia.com/mig-1g.10gb": "0"}),
    node("a100-0", {"nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB"}, {"nvidia.com/mig-1g.10gb": "7"}, cordoned=True),
])
def test_matching_node_without_the_resource_or_cordoned_is_not_schedulable(bad_node):
    (lane,) = canary_lanes({"gitlab_pools": [POOLS[2]], "nodes": [bad_node], "runtime_classes": ["nvidia"]})
    assert not lane["node_check"]["ok"]
    assert lane["node_check"]["reason"].startswith("no schedulable node: nodes a100-0 match")
    assert "nvidia.com/mig-1g.10gb" in lane["node_check"]["reason"]


def test_missing_runtime_class_fails_cuda_lanes_only():
    result = by_name(lanes(nodes=[L40S_NODE, A100_NODE, DRI_NODE], runtime_classes=[]))
    assert result["l40s-cuda-1gpu"]["node_check"]["reason"].startswith("RuntimeClass nvidia does not exist")
    assert result["dri-dri"]["node_check"]["ok"]


def test_long_names_stay_dns_labels():
    classes = {"a-very-long-gpu-class-name-for-a-datacenter-gpu-model": {"product": "X", "gpu_access": ["cuda"]}}
    (lane,) = canary_lanes({"gitlab_pools": [{"name": "p", "gpu_class": list(classes)[0], "gpus": 8}]}, classes)
    assert len(lane["name"]) <= 52 and lane["name"].replace("-", "").isalnum()


@pytest.mark.parametrize("spec, message", [
    ({"gitlab_pools": [{"name": "x", "gpu_class": "l40s", "gpus": 0}]}, "canary.gitlab_pools[name=x].gpus: must be an integer >= 1"),
    ({"gitlab_pools": [{"name": "x", "gpu_class": "v100"}]}, "canary.gitlab_pools[name=x].gpu_class: unknown GPU class"),
    ({"gitlab_pools": [{"gpu_class": "l40s"}]}, "canary.gitlab_pools[0].name: is required"),
    ({"gitlab_pools": [{"name": "x", "gpu_class": "l40s", "tokn": TOKEN}]}, "canary.gitlab_pools[name=x].tokn: unknown key"),
    ({"arc_scale_sets": [{"name": "x", "gpu_class": "dri", "gpus": 1}]}, "canary.arc_scale_sets[name=x].gpus: must be unset with gpu_access dri"),
    ({"arc_scale_sets": [{"name": "x", "gpu_class": "l40s", "state": "gone"}]}, "canary.arc_scale_sets[name=x].state: must be one of"),
    ({"arc_scale_sets": {"name": "x"}}, "canary.arc_scale_sets: must be a list"),
    ({"pools": []}, "canary.pools: unknown key"),
    ({"gitlab_pools": [], "runtime_classes": "nvidia", "nodes": []}, "canary.runtime_classes: must be a list of names"),
    ({"gitlab_pools": [], "arc_runtime_class": 1}, "canary.arc_runtime_class: must be a string"),
    ({"gitlab_pools": [], "paths": {"pools": "gitlab_runner_pools"}}, "canary.paths.pools: unknown key"),
])
def test_bad_input_names_the_field(spec, message):
    with pytest.raises(ValidationError) as error:
        canary_lanes(spec)
    assert message in str(error.value)
    assert TOKEN not in str(error.value)


@pytest.mark.parametrize("spec, message", [
    ({"gitlab_pools": [{"name": "x", "gpu_class": "l40s", "gpus": 0}], "paths": {"gitlab_pools": "gitlab_runner_pools"}},
     "gitlab_runner_pools[name=x].gpus: must be an integer >= 1"),
    ({"arc_scale_sets": [{"gpu_class": "l40s"}], "paths": {"arc_scale_sets": "gpu_canary_arc_scale_sets"}},
     "gpu_canary_arc_scale_sets[0].name: is required"),
    ({"arc_runtime_class": 1, "paths": {"arc_runtime_class": "gpu_canary_arc_runtime_class"}},
     "gpu_canary_arc_runtime_class: must be a string"),
    ({"setup_commands": {"cuda": "nvidia-smi"}, "paths": {"setup_commands": "gpu_canary_setup_commands"}},
     "gpu_canary_setup_commands.cuda: must be a list of strings"),
])
def test_errors_name_the_inventory_path_the_paths_give(spec, message):
    with pytest.raises(ValidationError) as error:
        canary_lanes(spec)
    assert str(error.value).startswith(message)


def test_a_pool_with_gpu_access_under_its_old_name_is_refused_as_the_roles_refuse_it():
    pools = [{"name": "new", "gpu_class": "dri", "gpu_access": "dri"}, {"name": "old", "gpu_class": "dri", "lane": "dri"}]
    with pytest.raises(ValidationError) as error:
        canary_lanes({"gitlab_pools": pools})
    assert str(error.value).startswith("canary.gitlab_pools[name=old].lane: was renamed gpu_access; set "
                                       "canary.gitlab_pools[name=old].gpu_access instead")


def test_each_lane_carries_its_commands_setup_first_then_its_check_then_cuda_samples():
    setup = {"cuda": ["nvidia-smi -L"], "dri": ["apt-get install -y vulkan-tools"]}
    samples = ["/usr/local/cuda/extras/demo_suite/deviceQuery"]
    result = by_name(lanes(setup_commands=setup, cuda_sample_commands=samples))
    assert result["l40s-cuda-1gpu"]["commands"] == ["nvidia-smi -L"] + CHECKS["nvidia-smi"]["commands"] + samples
    # The lane's MIG profile takes the place of the check's placeholder.
    assert result["a100-cuda-mig-1g-10gb"]["commands"] == [
        "nvidia-smi -L", "nvidia-smi -L | tee /tmp/gpu-canary.txt", "grep -q 'MIG 1g.10gb ' /tmp/gpu-canary.txt",
        "/usr/local/cuda/extras/demo_suite/deviceQuery"]
    assert not any(MIG_PROFILE in c for lane in result.values() for c in lane["commands"])
    # No CUDA sample on a /dev/dri lane.
    assert result["dri-dri"]["commands"] == ["apt-get install -y vulkan-tools"] + CHECKS["dri"]["commands"]


def test_without_commands_given_a_lane_runs_its_check_alone_and_names_its_job():
    result = by_name(lanes())
    assert result["l40s-cuda-1gpu"]["commands"] == CHECKS["nvidia-smi"]["commands"]
    assert {lane["job_name"] for lane in result.values()} == {JOB_PREFIX + name for name in result}


@pytest.mark.parametrize("extra, message", [
    ({"setup_commands": {"rocm": ["x"]}}, "canary.setup_commands.rocm: unknown key"),
    ({"setup_commands": {"cuda": "nvidia-smi"}}, "canary.setup_commands.cuda: must be a list of strings"),
    ({"cuda_sample_commands": [""]}, r"canary.cuda_sample_commands\[0\]: must be a non-empty string"),
])
def test_bad_commands_are_named(extra, message):
    with pytest.raises(ValidationError, match=message):
        lanes(**extra)


def test_runtime_classes_may_be_the_objects_the_cluster_returned():
    objects = [{"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"}}]
    assert lanes(nodes=[L40S_NODE], runtime_classes=objects) == lanes(nodes=[L40S_NODE], runtime_classes=["nvidia"])
    missing = by_name(lanes(gitlab_runtime_class="nvidia-cdi", nodes=[L40S_NODE], runtime_classes=objects))
    assert missing["l40s-cuda-1gpu"]["node_check"]["reason"].startswith("RuntimeClass nvidia-cdi does not exist")
