# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GitLab stand-in: runner API, routing by tags, git clone with a job token, the REST subset; no token recorded."""
import base64
import json
import os
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from http.server import ThreadingHTTPServer

import pytest

import gitlab_standin
from lib import gitlab_state

TOKEN = "glrt-unit-test-token-never-recorded"
ACCESS = {"PRIVATE-TOKEN": "glpat-unit-test-access-token"}
PROJECT = "/api/v4/projects/" + urllib.parse.quote("gpuci/canary", safe="")


@pytest.fixture
def standin(tmp_path):
    gitlab_standin.StandIn.configure(tmp_path / "record.jsonl", tmp_path / "repos")
    server = ThreadingHTTPServer(("127.0.0.1", 0), gitlab_standin.StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", tmp_path / "record.jsonl"
    server.shutdown()
    server.server_close()


def _call(url, method, body=b"", headers=None):
    if isinstance(body, (dict, list)):
        body, headers = json.dumps(body).encode(), {"Content-Type": "application/json", **(headers or {})}
    req = urllib.request.Request(url, data=body or None, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def _post(url, body, headers=None):
    status, _headers, data = _call(url, "POST", body, headers)
    return status, data


def _get_json(url):
    status, _headers, data = _call(url, "GET", headers=ACCESS)
    assert status == 200, (url, status, data)
    return json.loads(data)


def _seed(base, token, tags, run_untagged=False, paused=False, description=None):
    status, body = _post(base + "/gpuci-standin/runners", {
        "token": token, "description": description or token, "tag_list": tags, "run_untagged": run_untagged,
        "paused": paused})
    assert status == 201, body
    return json.loads(body)


def _queue(base, tags, script=("true",), **extra):
    body = {"tags": tags, "script": list(script), "image": "debian:bookworm", **extra}
    status, body = _post(base + "/gpuci-standin/jobs", body)
    assert status == 201, body
    return json.loads(body)["id"]


def _take(base, token):
    """(status, job payload or None) of one poll."""
    status, body = _post(base + "/api/v4/jobs/request", {"token": token})
    return status, json.loads(body) if status == 201 else None


def test_verify_and_request_for_a_runner_token(standin):
    base, record = standin
    status, body = _post(base + "/api/v4/runners/verify", {"token": TOKEN})
    assert status == 200
    assert json.loads(body)["id"] == gitlab_state.runner_id(TOKEN)
    assert _post(base + "/api/v4/jobs/request", {"token": TOKEN})[0] == 204
    assert _post(base + "/api/v4/runners/verify", {"token": "not-a-runner-token"})[0] == 403
    assert _post(base + "/api/v4/unknown", {"token": TOKEN})[0] == 404
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [(r["endpoint"], r["status"]) for r in lines] == [
        ("/api/v4/runners/verify", 200), ("/api/v4/jobs/request", 204),
        ("/api/v4/runners/verify", 403), ("/api/v4/unknown", 404)]
    assert lines[0]["token_sha256"] == gitlab_standin.token_fingerprint(TOKEN)
    assert TOKEN not in record.read_text()


def test_jobs_go_by_tags_as_gitlab_routes_them(standin):
    base, _record = standin
    gpu = "glrt-unit-gpu"
    cpu = "glrt-unit-cpu"
    seeded = _seed(base, gpu, ["gpu", "nvidia", "l40s"], description="l40s")
    _seed(base, cpu, ["cpu"])
    assert "token" not in seeded and seeded["tag_list"] == ["gpu", "nvidia", "l40s"]
    cpu_job = _queue(base, ["cpu"])
    gpu_job = _queue(base, ["gpu", "l40s"])
    too_many = _queue(base, ["gpu", "a100"])
    # The GPU runner skips the older CPU job (not its tags) and takes the oldest it may run.
    status, job = _take(base, gpu)
    assert (status, job["id"]) == (201, gpu_job)
    assert _take(base, gpu)[0] == 204, "a100 is not among the runner's tags"
    assert _take(base, cpu)[1]["id"] == cpu_job
    assert _take(base, cpu)[0] == 204
    seen = _get_json(f"{base}/gpuci-standin/jobs/{gpu_job}")
    assert seen["tags"] == ["gpu", "l40s"] and seen["state"] == "running"
    assert seen["runner"] == {"id": seeded["id"], "description": "l40s",
                              "token_sha256": gitlab_standin.token_fingerprint(gpu)}
    assert _get_json(f"{base}/gpuci-standin/jobs/{too_many}")["runner"] is None


def test_untagged_jobs_only_to_runners_that_run_untagged_and_paused_runners_get_nothing(standin):
    base, _record = standin
    tagged, untagged, paused = "glrt-unit-tagged", "glrt-unit-untagged", "glrt-unit-paused"
    _seed(base, tagged, ["cpu"])
    _seed(base, untagged, ["cpu"], run_untagged=True)
    _seed(base, paused, ["cpu"], run_untagged=True, paused=True)
    job = _queue(base, [])
    assert _take(base, paused)[0] == 204
    assert _take(base, tagged)[0] == 204
    assert _take(base, untagged)[1]["id"] == job
    # Unpaused (the harness endpoint updates a known token's runner), it takes work again.
    second = _queue(base, ["cpu"])
    _seed(base, paused, ["cpu"], paused=False)
    assert _take(base, paused)[1]["id"] == second
    # A runner paused through the REST API (active false) gets nothing either.
    runner_id = next(r["id"] for r in _get_json(base + "/gpuci-standin/runners") if r["description"] == tagged)
    assert _call(f"{base}/api/v4/runners/{runner_id}", "PUT", {"active": False}, ACCESS)[0] == 200
    _queue(base, ["cpu"])
    assert _take(base, tagged)[0] == 204
    # A glrt- token nobody seeded: the stand-in's leniency, an untagged runner that runs untagged jobs.
    assert _take(base, "glrt-nobody-seeded-this")[0] == 204
    lenient = _queue(base, [])
    assert _take(base, "glrt-nobody-seeded-this")[1]["id"] == lenient


def test_seed_file_runners_have_the_tokens_given(tmp_path):
    seed = [{"token": "glrt-from-seed", "description": "cpu", "tag_list": ["cpu"], "run_untagged": False,
             "paused": False}]
    gitlab_standin.StandIn.configure(tmp_path / "record.jsonl", tmp_path / "repos", seed)
    runner = gitlab_standin.StandIn.registry.for_token("glrt-from-seed")
    assert (runner["description"], runner["tag_list"], runner["run_untagged"]) == ("cpu", ["cpu"], False)
    assert "unknown_token" not in runner


def test_a_queued_job_is_handed_out_once_and_its_report_is_kept(standin):
    base, record = standin
    job_id = _queue(base, [], script=["echo hi", "exit 7"], name="unit", variables={"GIT_STRATEGY": "none"})
    status, job = _take(base, TOKEN)
    assert status == 201
    assert job["id"] == job_id and job["image"] == {"name": "debian:bookworm"}
    assert job["steps"][0]["script"] == ["echo hi", "exit 7"]
    variables = {v["key"]: v["value"] for v in job["variables"]}
    assert variables["GIT_STRATEGY"] == "none", "the job's own GIT_STRATEGY wins"
    assert [v["key"] for v in job["variables"]].count("GIT_STRATEGY") == 1
    assert job["token"].startswith(gitlab_state.JOB_TOKEN_PREFIX)
    assert "inputs" not in job
    assert _take(base, TOKEN)[0] == 204, "a job is handed out once"

    trace_url = f"{base}/api/v4/jobs/{job_id}/trace?debug_trace=false"
    headers = {"JOB-TOKEN": job["token"], "Content-Range": "0-5"}
    status, answer, _body = _call(trace_url, "PATCH", b"hello\n", headers)
    assert (status, answer["Range"]) == (202, "0-6")
    # A patch that does not start where the trace ends is refused with the length kept.
    status, answer, _body = _call(trace_url, "PATCH", b"again\n", dict(headers, **{"Content-Range": "0-5"}))
    assert (status, answer["Range"]) == (416, "0-6")
    assert _call(trace_url, "PATCH", b"x", {"JOB-TOKEN": "glcbt-wrong", "Content-Range": "6-6"})[0] == 403

    update = {"token": job["token"], "state": "failed", "exit_code": 7, "failure_reason": "script_failure"}
    status, answer, _body = _call(f"{base}/api/v4/jobs/{job_id}", "PUT", update)
    assert (status, answer["Job-Status"]) == (200, "failed")

    seen = _get_json(f"{base}/gpuci-standin/jobs/{job_id}")
    assert (seen["state"], seen["exit_code"], seen["failure_reason"], seen["trace"]) == \
        ("failed", 7, "script_failure", "hello\n")
    assert "token" not in seen
    text = record.read_text()
    assert TOKEN not in text and job["token"] not in text


def test_a_job_carries_its_timeout_and_a_cancel_reaches_its_runner_as_gitlab_signals_it(standin):
    base, _record = standin
    job_id = _queue(base, [], timeout=45)
    _status, job = _take(base, TOKEN)
    assert job["runner_info"]["timeout"] == 45 and job["steps"][0]["timeout"] == 45
    assert _post(base + "/gpuci-standin/jobs", {"script": ["true"], "timeout": "soon"})[0] == 400

    assert json.loads(_post(f"{base}/gpuci-standin/jobs/{job_id}/cancel", {})[1])["state"] == "canceling"
    trace_url = f"{base}/api/v4/jobs/{job_id}/trace"
    status, answer, _body = _call(trace_url, "PATCH", b"x", {"JOB-TOKEN": job["token"], "Content-Range": "0-0"})
    assert (status, answer["Job-Status"]) == (202, "canceling")
    # The runner still reporting the job running does not undo the cancel.
    touch = {"token": job["token"], "state": "running"}
    assert _call(f"{base}/api/v4/jobs/{job_id}", "PUT", touch)[1]["Job-Status"] == "canceling"
    final = {"token": job["token"], "state": "failed", "failure_reason": "script_failure"}
    assert _call(f"{base}/api/v4/jobs/{job_id}", "PUT", final)[1]["Job-Status"] == "canceled"
    assert _get_json(f"{base}/gpuci-standin/jobs/{job_id}")["state"] == "canceled"

    pending = _queue(base, ["nobody-has-this-tag"])
    assert json.loads(_post(f"{base}/gpuci-standin/jobs/{pending}/cancel", {})[1])["state"] == "canceled"
    assert _post(f"{base}/gpuci-standin/jobs/999/cancel", {})[0] == 404


def _answers(base) -> bool:
    try:
        urllib.request.urlopen(base + "/gpuci-standin/runners", timeout=2).close()
        return True
    except OSError:  # refused, or reset when the listening socket closed under an accepted connection
        return False


def _poll_until(condition, seconds=5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_an_outage_refuses_connections_for_its_seconds_and_keeps_every_job(tmp_path):
    gitlab_standin.StandIn.configure(tmp_path / "record.jsonl", tmp_path / "repos")
    probe = ThreadingHTTPServer(("127.0.0.1", 0), gitlab_standin.StandIn)
    address = probe.server_address[:2]
    probe.server_close()
    threading.Thread(target=gitlab_standin.serve, args=(address,), daemon=True).start()
    base = "http://%s:%d" % address
    assert _poll_until(lambda: _answers(base))
    job_id = _queue(base, [])
    assert _post(base + "/gpuci-standin/outage", {"seconds": 0})[0] == 400
    assert _post(base + "/gpuci-standin/outage", {"seconds": 5})[0] == 202
    assert _poll_until(lambda: not _answers(base)), "the stand-in kept answering during its outage"
    assert _poll_until(lambda: _answers(base), seconds=30), "the stand-in did not come back after its outage"
    assert _get_json(f"{base}/gpuci-standin/jobs/{job_id}")["state"] == "pending"


def _git(*args, cwd=None):
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "GIT_CONFIG_NOSYSTEM": "1",
           "HOME": str(cwd or "/nonexistent")}
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, timeout=60, env=env, check=False)


def test_a_running_job_clones_its_project_with_its_token_and_nothing_else_does(standin, tmp_path):
    base, record = standin
    job_id = _queue(base, [])
    _status, job = _take(base, TOKEN)
    git = job["git_info"]
    host = base.split("://", 1)[1]
    assert git["repo_url"] == f"http://gitlab-ci-token:{job['token']}@{host}/gpuci/canary.git"
    assert (git["ref"], git["depth"], git["before_sha"]) == ("main", 20, "0" * 40)
    assert git["refspecs"] == ["+refs/heads/main:refs/remotes/origin/main"]
    variables = {v["key"]: v["value"] for v in job["variables"]}
    assert variables["GIT_STRATEGY"] == "fetch"
    assert (variables["CI_PROJECT_PATH"], variables["CI_COMMIT_SHA"], variables["CI_COMMIT_REF_NAME"],
            variables["CI_JOB_ID"], variables["CI_SERVER_URL"]) == ("gpuci/canary", git["sha"], "main", str(job_id),
                                                                    base)
    assert variables["CI_PIPELINE_ID"] == str(job["job_info"]["pipeline_id"])
    assert "CI_JOB_TOKEN" not in variables, "the runner adds it itself"

    cloned = _git("clone", "-q", "--depth", "20", git["repo_url"], str(tmp_path / "clone"), cwd=tmp_path)
    assert cloned.returncode == 0, cloned.stderr
    assert _git("rev-parse", "HEAD", cwd=tmp_path / "clone").stdout.strip() == git["sha"]
    assert (tmp_path / "clone" / "README.md").read_text().startswith("# gpuci/canary")

    anonymous = _git("clone", "-q", f"{base}/gpuci/canary.git", str(tmp_path / "anon"), cwd=tmp_path)
    assert anonymous.returncode != 0
    wrong = _git("clone", "-q", f"http://gitlab-ci-token:glcbt-wrong@{host}/gpuci/canary.git",
                 str(tmp_path / "wrong"), cwd=tmp_path)
    assert wrong.returncode != 0
    status, headers, _body = _call(f"{base}/gpuci/canary.git/info/refs?service=git-upload-pack", "GET")
    assert status == 401 and headers["WWW-Authenticate"].startswith("Basic")
    # Pushing with a job token is refused.
    push = _git("push", "-q", git["repo_url"], "HEAD:refs/heads/pushed", cwd=tmp_path / "clone")
    assert push.returncode != 0

    # Once the job is over, its token clones nothing.
    _call(f"{base}/api/v4/jobs/{job_id}", "PUT", {"token": job["token"], "state": "success"})
    late = _git("clone", "-q", git["repo_url"], str(tmp_path / "late"), cwd=tmp_path)
    assert late.returncode != 0
    text = record.read_text()
    assert job["token"] not in text and "glcbt-wrong" not in text
    assert any(r["endpoint"] == "/gpuci/canary.git/info/refs" and r["status"] == 200
               for r in map(json.loads, text.splitlines()))


def test_the_rest_api_needs_an_access_token_and_knows_its_projects(standin):
    base, _record = standin
    assert _call(base + PROJECT, "GET")[0] == 401
    assert _call(base + PROJECT, "GET", headers={"PRIVATE-TOKEN": "glrt-not-an-access-token"})[0] == 401
    assert _call(base + "/api/v4/projects/nobody%2Fnothing", "GET", headers=ACCESS)[0] == 404
    by_path, by_id = _get_json(base + PROJECT), _get_json(base + "/api/v4/projects/1")
    assert by_path == by_id
    assert (by_path["id"], by_path["path_with_namespace"], by_path["default_branch"]) == (1, "gpuci/canary", "main")
    assert by_path["web_url"] == base + "/gpuci/canary"
    assert by_path["permissions"]["project_access"]["access_level"] == 40


def test_a_commit_through_the_api_is_read_back(standin):
    base, record = standin
    raw = base + PROJECT + "/repository/files/" + urllib.parse.quote("ci/check.sh", safe="") + "/raw?ref=main"
    assert _call(raw, "GET", headers=ACCESS)[0] == 404
    commit = {"branch": "main", "commit_message": "Add the check\n\nbody",
              "actions": [{"action": "create", "file_path": "ci/check.sh", "content": "echo ok\n"}]}
    status, body = _post(base + PROJECT + "/repository/commits", commit, ACCESS)
    assert status == 201, body
    made = json.loads(body)
    assert (made["title"], made["short_id"]) == ("Add the check", made["id"][:8])
    status, _headers, data = _call(raw, "GET", headers=ACCESS)
    assert (status, data) == (200, b"echo ok\n")
    meta = _get_json(base + PROJECT + "/repository/files/ci%2Fcheck.sh?ref=main")
    assert base64.b64decode(meta["content"]) == b"echo ok\n" and meta["last_commit_id"] == made["id"]
    # The API commits what it is told: creating it again is GitLab's 400; the caller compares first.
    assert _post(base + PROJECT + "/repository/commits", commit, ACCESS)[0] == 400
    update = dict(commit, actions=[dict(commit["actions"][0], action="update", content="echo changed\n")])
    status, first = _post(base + PROJECT + "/repository/commits", update, ACCESS)
    assert status == 201
    assert _call(raw, "GET", headers=ACCESS)[2] == b"echo changed\n"
    # An identical update is committed too (a new commit, same tree): telling "unchanged" is the caller's
    # job, by reading the file first.
    status, again = _post(base + PROJECT + "/repository/commits", update, ACCESS)
    assert status == 201 and json.loads(again)["id"] != json.loads(first)["id"]
    assert _call(base + PROJECT + "/repository/files/README.md/raw?ref=nope", "GET", headers=ACCESS)[0] == 404
    assert ACCESS["PRIVATE-TOKEN"] not in record.read_text()


CI_CONFIG = """
stages: [build, test]
variables: {GLOBAL: one, SHARED: top}
default:
  image: debian:bookworm
.hidden: {script: [never]}
workflow: {rules: [{when: always}]}
build-gpu:
  stage: build
  tags: [gpu, l40s]
  image: {name: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04}
  variables: {SHARED: job}
  script: nvidia-smi
test-cpu:
  tags: [cpu]
  script: [echo one, echo two]
"""


def _commit_ci(base, content=CI_CONFIG):
    body = {"branch": "main", "commit_message": "CI", "actions": [
        {"action": "create", "file_path": ".gitlab-ci.yml", "content": content}]}
    status, data = _post(base + PROJECT + "/repository/commits", body, ACCESS)
    assert status == 201, data
    return json.loads(data)["id"]


def test_a_pipeline_queues_the_jobs_of_gitlab_ci_yml_and_rolls_their_status_up(standin):
    base, record = standin
    assert _post(base + PROJECT + "/pipeline", {"ref": "main"}, ACCESS)[0] == 400, "no .gitlab-ci.yml yet"
    sha = _commit_ci(base)
    assert _post(base + PROJECT + "/pipeline", {"ref": "nope"}, ACCESS)[0] == 400
    status, body = _post(base + PROJECT + "/pipeline", {"ref": "main"}, ACCESS)
    assert status == 201, body
    pipeline = json.loads(body)
    assert (pipeline["status"], pipeline["ref"], pipeline["sha"]) == ("pending", "main", sha)
    assert pipeline["web_url"] == f"{base}/gpuci/canary/-/pipelines/{pipeline['id']}"
    jobs_url = f"{base}{PROJECT}/pipelines/{pipeline['id']}/jobs"
    jobs = {j["name"]: j for j in _get_json(jobs_url)}
    assert set(jobs) == {"build-gpu", "test-cpu"}
    assert (jobs["build-gpu"]["tag_list"], jobs["build-gpu"]["stage"]) == (["gpu", "l40s"], "build")
    assert (jobs["test-cpu"]["stage"], jobs["test-cpu"]["runner"], jobs["test-cpu"]["status"]) == \
        ("test", None, "pending")

    gpu, cpu = "glrt-unit-pipeline-gpu", "glrt-unit-pipeline-cpu"
    _seed(base, gpu, ["gpu", "l40s", "nvidia"], description="l40s")
    _seed(base, cpu, ["cpu"], description="cpu")
    _status, gpu_job = _take(base, gpu)
    assert gpu_job["image"]["name"].startswith("nvcr.io/nvidia/cuda")
    assert gpu_job["steps"][0]["script"] == ["nvidia-smi"]
    variables = {v["key"]: v["value"] for v in gpu_job["variables"]}
    assert (variables["GLOBAL"], variables["SHARED"], variables["CI_JOB_STAGE"]) == ("one", "job", "build")
    pipeline_url = f"{base}{PROJECT}/pipelines/{pipeline['id']}"
    assert _get_json(pipeline_url)["status"] == "running"
    _call(f"{base}/api/v4/jobs/{gpu_job['id']}", "PUT", {"token": gpu_job["token"], "state": "success"})
    assert _get_json(pipeline_url)["status"] == "running", "one job still pending"
    _status, cpu_job = _take(base, cpu)
    assert cpu_job["image"]["name"] == "debian:bookworm" and cpu_job["steps"][0]["script"] == ["echo one", "echo two"]
    _call(f"{base}/api/v4/jobs/{cpu_job['id']}/trace", "PATCH", b"two\n",
          {"JOB-TOKEN": cpu_job["token"], "Content-Range": "0-3"})
    _call(f"{base}/api/v4/jobs/{cpu_job['id']}", "PUT",
          {"token": cpu_job["token"], "state": "failed", "exit_code": 1, "failure_reason": "script_failure"})
    assert _get_json(pipeline_url)["status"] == "failed"

    job = _get_json(f"{base}{PROJECT}/jobs/{cpu_job['id']}")
    assert (job["status"], job["failure_reason"]) == ("failed", "script_failure")
    assert job["pipeline"]["id"] == pipeline["id"]
    assert job["runner"]["description"] == "cpu" and job["duration"] is not None
    assert job["web_url"] == f"{base}/gpuci/canary/-/jobs/{cpu_job['id']}"
    status, headers, trace = _call(f"{base}{PROJECT}/jobs/{cpu_job['id']}/trace", "GET", headers=ACCESS)
    assert (status, trace) == (200, b"two\n") and headers["Content-Type"].startswith("text/plain")
    assert _call(f"{base}{PROJECT}/jobs/{cpu_job['id']}/trace", "GET")[0] == 401
    assert _call(f"{base}{PROJECT}/jobs/999/trace", "GET", headers=ACCESS)[0] == 404
    text = record.read_text()
    for token in (gpu, cpu, gpu_job["token"], cpu_job["token"], ACCESS["PRIVATE-TOKEN"]):
        assert token not in text


def test_ci_config_subset():
    from lib.gitlab_pipelines import ConfigError, parse_ci_config

    jobs = parse_ci_config(CI_CONFIG)
    assert [j["name"] for j in jobs] == ["build-gpu", "test-cpu"]
    assert jobs[1] == {"name": "test-cpu", "stage": "test", "script": ["echo one", "echo two"], "tags": ["cpu"],
                       "image": "debian:bookworm", "variables": {"GLOBAL": "one", "SHARED": "top"}}
    with pytest.raises(ConfigError, match="script"):
        parse_ci_config("job: {tags: [cpu]}")
    with pytest.raises(ConfigError, match="No stages"):
        parse_ci_config("stages: [test]\n.hidden: {script: x}\n")
