# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""canary_plan: the canary's variables -> its labels, Job timing, lanes and the settings it refuses."""
import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.plan import canary_plan
from ansible_collections.gpuci.runners.plugins.module_utils.common.ownership_labels import OWNERSHIP_LABELS

TOKEN = "glrt-must-never-leak"
POOLS = [{"name": "l40s", "gpu_class": "l40s", "gpus": 1, "token": TOKEN}, {"name": "cpu", "token": TOKEN}]
SCALE_SETS = [{"name": "arc-dri", "gpu_class": "dri", "gpu_access": "dri", "github_token": TOKEN}]


def settings(**overrides):
    """The role's defaults, with the runner roles' lists as the canary's (as its defaults make them)."""
    base = {
        "gpu_canary_state": "present", "gpu_canary_namespace": "gpu-canary", "gpu_canary_job_timeout": 600,
        "gpu_canary_poll_interval": 5, "gpu_canary_job_ttl": 600, "gpu_canary_report_dir": "gpu-canary-report",
        "gpu_canary_images": {"cuda": "nvidia/cuda:12.4.1-base-ubuntu22.04", "dri": "ubuntu:24.04"},
        "gpu_canary_gitlab_pools": POOLS, "gpu_canary_arc_scale_sets": SCALE_SETS,
        "gpu_canary_gitlab_runtime_class": None, "gpu_canary_arc_runtime_class": None,
        "gpu_canary_setup_commands": {"cuda": [], "dri": []}, "gpu_canary_cuda_sample_commands": [],
        "gitlab_runner_pools": POOLS, "arc_runners_scale_sets": SCALE_SETS,
    }
    return dict(base, **overrides)


def test_the_defaults_plan_labels_timing_and_lanes_without_problems():
    plan = canary_plan(settings())
    assert plan["problems"] == []
    assert plan["labels"] == dict(OWNERSHIP_LABELS, **{"app.kubernetes.io/component": "gpu-canary"})
    assert plan["label_selectors"] == ["%s=%s" % pair for pair in plan["labels"].items()]
    # The Job outlives the play's wait by a minute; the polls fill the wait.
    assert (plan["job_deadline"], plan["wait_retries"]) == (660, 120)
    assert [lane["name"] for lane in plan["lanes"]] == ["l40s-cuda-1gpu", "dri-dri"]
    assert all("node_check" not in lane for lane in plan["lanes"])


def test_a_wait_that_does_not_divide_rounds_up():
    assert canary_plan(settings(gpu_canary_job_timeout=61, gpu_canary_poll_interval=10))["wait_retries"] == 7


def test_integers_from_extra_vars_come_as_strings_and_count():
    plan = canary_plan(settings(gpu_canary_job_timeout="300", gpu_canary_poll_interval="10"))
    assert (plan["problems"], plan["job_deadline"], plan["wait_retries"]) == ([], 360, 30)


@pytest.mark.parametrize("overrides, problem", [
    ({"gpu_canary_job_timeout": 0}, "gpu_canary_job_timeout: must be an integer >= 1 (got 0)"),
    ({"gpu_canary_job_timeout": "soon"}, "gpu_canary_job_timeout: must be an integer >= 1 (got 'soon')"),
    ({"gpu_canary_poll_interval": True}, "gpu_canary_poll_interval: must be an integer >= 1 (got True)"),
    ({"gpu_canary_job_ttl": -1}, "gpu_canary_job_ttl: must be an integer >= 0 (got -1)"),
    ({"gpu_canary_poll_interval": 30, "gpu_canary_job_timeout": 10},
     "gpu_canary_poll_interval: must not exceed gpu_canary_job_timeout (10) (got 30)"),
    ({"gpu_canary_namespace": "GPU_canary"}, "gpu_canary_namespace: must be a DNS label"),
    ({"gpu_canary_namespace": "x" * 64}, "gpu_canary_namespace: must be a DNS label"),
    ({"gpu_canary_report_dir": ""}, "gpu_canary_report_dir: must name a directory"),
    ({"gpu_canary_images": {"cuda": "", "dri": "ubuntu:24.04"}}, "gpu_canary_images.cuda: must name an image"),
])
def test_each_bad_setting_is_named_alone(overrides, problem):
    plan = canary_plan(settings(**overrides))
    assert len(plan["problems"]) == 1 and plan["problems"][0].startswith(problem), plan["problems"]


def test_bad_timing_leaves_no_deadline_to_use():
    plan = canary_plan(settings(gpu_canary_job_timeout=0))
    assert (plan["job_deadline"], plan["wait_retries"]) == (None, None)


def test_every_problem_comes_at_once():
    plan = canary_plan(settings(gpu_canary_namespace="Bad", gpu_canary_job_ttl=-5, gpu_canary_report_dir=""))
    assert [p.split(":")[0] for p in plan["problems"]] == [
        "gpu_canary_namespace", "gpu_canary_job_ttl", "gpu_canary_report_dir"]


def test_a_pool_is_named_as_the_runner_role_wrote_it_while_the_canary_takes_its_list():
    bad = [{"name": "l40s", "gpu_class": "l40s", "gpus": 0, "token": TOKEN}]
    plan = canary_plan(settings(gpu_canary_gitlab_pools=bad, gitlab_runner_pools=bad))
    assert plan["problems"] == ["gitlab_runner_pools[name=l40s].gpus: must be an integer >= 1 (got 0)"]
    assert plan["lanes"] == []
    assert TOKEN not in str(plan)


def test_a_list_of_the_canary_own_is_named_by_the_canary_variable():
    plan = canary_plan(settings(gpu_canary_arc_scale_sets=[{"name": "s", "gpu_class": "dri", "gpus": 1}]))
    assert [p.split(",")[0] for p in plan["problems"]] == [
        "gpu_canary_arc_scale_sets[name=s].gpus: must be unset with gpu_access dri"]
    assert plan["lane_paths"]["gitlab_pools"] == "gitlab_runner_pools"
    assert plan["lane_paths"]["arc_scale_sets"] == "gpu_canary_arc_scale_sets"


def test_without_the_runner_roles_the_canary_variables_are_named():
    paths = canary_plan(settings(gitlab_runner_pools=None, arc_runners_scale_sets=None))["lane_paths"]
    assert paths == {key: "gpu_canary_" + key for key in
                     ("gitlab_pools", "arc_scale_sets", "gitlab_runtime_class", "arc_runtime_class", "setup_commands",
                      "cuda_sample_commands")}


def test_removing_the_canary_checks_only_its_namespace():
    plan = canary_plan(settings(gpu_canary_state="absent", gpu_canary_job_timeout=0, gpu_canary_report_dir="",
                                gpu_canary_gitlab_pools=[{"name": "p", "gpu_class": "v100"}]))
    assert (plan["problems"], plan["lanes"], plan["job_deadline"]) == ([], [], None)
    assert canary_plan(settings(gpu_canary_state="absent", gpu_canary_namespace="Bad"))["problems"][0].startswith(
        "gpu_canary_namespace:")
    assert plan["label_selectors"]  # absent.yml finds the canary's Jobs by them


def test_helm_lists_the_cluster_the_inventory_names():
    base = ["helm", "list", "--all-namespaces", "--deployed", "--output", "json"]
    assert canary_plan(settings())["helm_list_argv"] == base
    assert canary_plan(settings(gpuci_kubeconfig="", gpuci_kube_context=""))["helm_list_argv"] == base
    assert canary_plan(settings(gpuci_kubeconfig="/k/config", gpuci_kube_context="kind-x"))["helm_list_argv"] == \
        base + ["--kubeconfig", "/k/config", "--kube-context", "kind-x"]
    assert canary_plan(settings(gpuci_kube_context="kind-x"))["helm_list_argv"] == base + ["--kube-context", "kind-x"]


def test_the_role_hands_the_plan_the_cluster_helm_lists():
    from pathlib import Path
    task = (Path(__file__).resolve().parents[5] / "roles/gpu_canary/tasks/preflight.yml").read_text()
    assert "'gpuci_kubeconfig': gpuci_kubeconfig | default('')" in task
    assert "'gpuci_kube_context': gpuci_kube_context | default('')" in task
