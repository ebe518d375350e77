# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""canary_gitlab: GitLab mode's rules without GitLab (errors naming variables, traces, pods, when to give up)."""
import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.gitlab_jobs import (
    access_problem,
    expected_jobs,
    give_up,
    http_problem,
    pod_of_job,
    progress_line,
    project_ident,
    protected_problem,
    trace_lines,
    unreachable_problem,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.lanes import canary_lanes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.plan import canary_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.gitlab_pipeline import pipeline_summary

URL = "https://gitlab.example.com"


def test_expected_jobs_one_per_pool_with_its_tags():
    lanes = canary_lanes({"gitlab_pools": [{"name": "l40s", "gpu_class": "l40s", "tags": ["gpu"]},
                                           {"name": "cpu", "tags": ["cpu"]}], "cpu_lanes": True})
    assert expected_jobs(lanes) == [
        {"name": "gpu-canary-l40s", "lane": "l40s-cuda-1gpu", "pool": "l40s", "tags": ["gpu"]},
        {"name": "gpu-canary-cpu", "lane": "cpu", "pool": "cpu", "tags": ["cpu"]}]


def test_cpu_lane_only_in_gitlab_mode_and_its_node_check_is_the_scheduler_s():
    pools = [{"name": "cpu", "tags": ["cpu"]}]
    assert canary_lanes({"gitlab_pools": pools}) == []
    (lane,) = canary_lanes({"gitlab_pools": pools, "cpu_lanes": True, "nodes": [{"metadata": {"name": "n"}}]})
    assert (lane["name"], lane["gpu_access"], lane["check"], lane["count"]) == ("cpu", "none", "cpu", 0)
    assert lane["node_check"] == {"matching": [], "schedulable": [], "simulated": [], "ok": True, "reason": ""}


@pytest.mark.parametrize("value, ident", [("42", 42), (42, 42), ("group/canary", "group/canary"), (" a/b ", "a/b")])
def test_project_by_id_or_path(value, ident):
    assert project_ident(value) == ident


def test_access_below_developer_names_the_project_and_never_a_token():
    message = access_problem({"project_access": {"access_level": 20}, "group_access": None}, "g/canary", "main")
    assert message.startswith("gpu_canary_gitlab_project: ")
    assert "Reporter access (level 20)" in message and "gpu_canary_gitlab_ref=main" in message
    assert access_problem({"project_access": None, "group_access": {"access_level": 30}}, "g/c", "main") == ""
    assert "has No access (level 0)" in access_problem(None, "g/c", "main")


def test_a_protected_ref_the_user_may_not_push_to_names_the_ref():
    maintainers_only = {"name": "main", "push_access_levels": [{"access_level": 40}]}
    assert protected_problem(maintainers_only, 30, "g/c", "main").startswith("gpu_canary_gitlab_ref: branch main")
    assert protected_problem(maintainers_only, 40, "g/c", "main") == ""
    assert protected_problem(None, 30, "g/c", "main") == "", "not protected"
    assert protected_problem({"push_access_levels": [{"access_level": 40, "user_id": 7}]}, 30, "g/c", "main") == ""
    no_one = {"push_access_levels": [{"access_level": 0}]}
    assert protected_problem(no_one, 50, "g/c", "main").startswith("gpu_canary_gitlab_ref")


@pytest.mark.parametrize("status, step, variable", [
    (401, "reading the project", "gpu_canary_gitlab_api_token"),
    (404, "reading the project", "gpu_canary_gitlab_project"),
    (400, "committing .gitlab-ci.yml", "gpu_canary_gitlab_ref"),
    (403, "committing .gitlab-ci.yml", "gpu_canary_gitlab_ref"),
    (404, "creating a pipeline", "gpu_canary_gitlab_ref"),
    (502, "creating a pipeline", "gpu_canary_gitlab_url"),
])
def test_each_http_error_names_the_variable_to_fix(status, step, variable):
    assert http_problem(step, status, "g/canary", "main", URL).startswith(variable + ": ")


def test_unreachable_names_the_url():
    assert unreachable_problem(URL, "Connection refused\n  retry") == (
        "gpu_canary_gitlab_url: GitLab cannot be reached at %s: Connection refused retry" % URL)


def test_trace_lines_drop_colours_sections_and_carriage_returns():
    trace = ("section_start:1700000000:prepare_script\r\x1b[0K\x1b[0KRunning on runner-abc via mgr...\n"
             "\x1b[32;1m$ nvidia-smi\x1b[0;m\nprogress 10%\rprogress 100%\nNVIDIA L40S, 550.54.15, 46068 MiB\r\n"
             "section_end:1700000001:prepare_script\r\x1b[0K\n\n")
    assert trace_lines(trace) == ["Running on runner-abc via mgr...", "$ nvidia-smi", "progress 100%",
                                  "NVIDIA L40S, 550.54.15, 46068 MiB"]


def test_trace_lines_drop_the_runner_s_timestamp_prefixes():
    """GitLab Runner 18+ prefixes each line with time, stream and flags; evidence lines must still start the line."""
    trace = ("2026-11-28T07:20:45.317258Z 01O \x1b[32;1m$ echo hi\x1b[0;m\n"
             "2026-11-28T07:20:45.317277Z 01O gpu-canary: CPU job ran on pod-1 (Linux)\n"
             "2026-11-28T07:20:45.816633Z 00O+\x1b[0K\x1b[36;1mCleaning up\x1b[0;m\n")
    assert trace_lines(trace) == ["$ echo hi", "gpu-canary: CPU job ran on pod-1 (Linux)", "Cleaning up"]


def test_pod_of_job_by_the_runner_s_annotation_else_the_trace():
    pods = [{"metadata": {"name": "other", "annotations": {"job.runner.gitlab.com/id": "6"}}},
            {"metadata": {"name": "runner-x", "namespace": "jobs", "annotations": {"job.runner.gitlab.com/id": "7"}},
             "spec": {"nodeName": "kwok-l40s-0", "runtimeClassName": "nvidia", "containers": [
                 {"name": "build", "resources": {"limits": {"cpu": "1", "nvidia.com/gpu": 1}}},
                 {"name": "helper", "resources": {"limits": {"memory": "1Gi"}}}]},
             "status": {"phase": "Running"}}]
    assert pod_of_job(pods, 7) == {"name": "runner-x", "namespace": "jobs", "node": "kwok-l40s-0", "phase": "Running",
                                   "runtime_class": "nvidia", "device_limits": {"build": {"nvidia.com/gpu": "1"}}}
    assert pod_of_job([], 7, ["Running on runner-y via m..."]) == {"name": "runner-y", "namespace": None,
                                                                   "node": None, "phase": None,
                                                                   "runtime_class": None, "device_limits": {}}
    assert pod_of_job(pods, 8) is None


@pytest.mark.parametrize("job, now, expected", [
    ({"status": "pending", "queued_at": 0, "started_at": None}, 29, ""),
    ({"status": "pending", "queued_at": 0, "started_at": None}, 30, "pending"),
    ({"status": "running", "queued_at": 0, "started_at": 20}, 79, ""),
    ({"status": "running", "queued_at": 0, "started_at": 20}, 80, "running"),
    ({"status": "failed", "queued_at": 0, "started_at": None}, 999, ""),
])
def test_give_up_after_the_pending_then_the_run_timeout(job, now, expected):
    assert give_up(job, now, pending_timeout=30, run_timeout=60) == expected


def test_progress_line_says_which_jobs_wait_run_or_ended_and_for_how_long():
    jobs = [{"name": "a", "status": "pending", "queued_at": 0, "started_at": None, "gave_up": ""},
            {"name": "b", "status": "running", "queued_at": 0, "started_at": 7, "gave_up": ""},
            {"name": "c", "status": "success", "queued_at": 0, "started_at": 1, "gave_up": ""},
            {"name": "d", "status": "pending", "queued_at": 0, "started_at": None, "gave_up": "pending"}]
    assert progress_line(jobs, 12) == "pending: a (12s); running: b (5s); done: c (success), d (gave up, pending)"


def _plan(**gitlab):
    settings = {"gpu_canary_state": "present", "gpu_canary_namespace": "gpu-canary", "gpu_canary_job_timeout": 60,
                "gpu_canary_poll_interval": 5, "gpu_canary_job_ttl": 60, "gpu_canary_report_dir": "r",
                "gpu_canary_images": {"cuda": "c", "dri": "d"},
                "gpu_canary_gitlab_pools": [{"name": "cpu", "tags": ["cpu"]}],
                "gpu_canary_gitlab_ref": "main", "gpu_canary_gitlab_job_timeout": 300}
    settings.update(gitlab)
    return canary_plan(settings)


def test_plan_without_a_url_is_as_before():
    plan = _plan()
    assert plan["gitlab"] == {"enabled": False} and plan["lanes"] == [] and plan["problems"] == []


def test_plan_with_a_url_turns_gitlab_mode_on_with_the_cpu_lane():
    plan = _plan(gpu_canary_gitlab_url=URL + "/", gpu_canary_gitlab_project="g/canary",
                 gpu_canary_gitlab_api_token_given=True)
    assert plan["problems"] == []
    assert plan["gitlab"] == {"enabled": True, "url": URL, "project": "g/canary", "ref": "main", "job_timeout": 300}
    assert [lane["name"] for lane in plan["lanes"]] == ["cpu"]


def test_plan_refuses_gitlab_settings_naming_each_variable_never_the_token():
    plan = _plan(gpu_canary_gitlab_url="gitlab.example.com", gpu_canary_gitlab_project="",
                 gpu_canary_gitlab_ref="-x", gpu_canary_gitlab_job_timeout=0)
    named = [problem.split(":")[0] for problem in plan["problems"]]
    assert named == ["gpu_canary_gitlab_url", "gpu_canary_gitlab_project", "gpu_canary_gitlab_ref",
                     "gpu_canary_gitlab_api_token", "gpu_canary_gitlab_job_timeout"]


@pytest.mark.parametrize("result, check_mode, summary", [
    ({"changed": True, "commit": None, "pipeline": None}, True,
     "Check mode: .gitlab-ci.yml would be committed to g/canary@main; no pipeline is created."),
    ({"changed": False, "commit": None, "pipeline": None}, True,
     "Check mode: .gitlab-ci.yml is unchanged in g/canary@main; no pipeline is created."),
    ({"changed": True, "commit": {"id": "abc123"}, "pipeline": {"id": 7, "web_url": "https://g/p/7", "status": "success"}},
     False, "Pipeline 7 (https://g/p/7): success; committed abc123."),
    ({"changed": False, "commit": None, "pipeline": {"id": 8, "web_url": "https://g/p/8", "status": "failed"}},
     False, "Pipeline 8 (https://g/p/8): failed; the file was unchanged."),
])
def test_the_pipeline_summary_the_role_shows(result, check_mode, summary):
    result = dict(result, file=".gitlab-ci.yml", ref="main", project={"id": 1, "path": "g/canary"})
    assert pipeline_summary(result, check_mode) == summary
