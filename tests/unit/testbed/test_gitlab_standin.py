# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GitLab stand-in answers the runner API subset and records no token."""
import json
import threading
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer

import pytest

import gitlab_standin
from lib import gitlab_state

TOKEN = "glrt-unit-test-token-never-recorded"


@pytest.fixture
def standin(tmp_path):
    gitlab_standin.StandIn.record = tmp_path / "record.jsonl"
    server = ThreadingHTTPServer(("127.0.0.1", 0), gitlab_standin.StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", tmp_path / "record.jsonl"
    server.shutdown()


def _post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def test_verify_and_request_for_a_runner_token(standin):
    base, record = standin
    status, body = _post(base + "/api/v4/runners/verify", {"token": TOKEN})
    assert status == 200
    assert json.loads(body)["id"] == gitlab_standin.runner_id(TOKEN)
    assert _post(base + "/api/v4/jobs/request", {"token": TOKEN})[0] == 204
    assert _post(base + "/api/v4/runners/verify", {"token": "not-a-runner-token"})[0] == 403
    assert _post(base + "/api/v4/unknown", {"token": TOKEN})[0] == 404
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [(r["endpoint"], r["status"]) for r in lines] == [
        ("/api/v4/runners/verify", 200), ("/api/v4/jobs/request", 204),
        ("/api/v4/runners/verify", 403), ("/api/v4/unknown", 404)]
    assert lines[0]["token_sha256"] == gitlab_standin.token_fingerprint(TOKEN)
    assert TOKEN not in record.read_text()


def _call(url, method, body=b"", headers=None):
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), err.read()


def test_a_queued_job_goes_to_its_runner_only_and_its_report_is_kept(standin):
    base, record = standin
    other = "glrt-another-runner"
    status, body = _post(base + "/gpuci-standin/jobs", {
        "runner_token_sha256": gitlab_standin.token_fingerprint(TOKEN), "script": ["echo hi", "exit 7"],
        "image": "debian:bookworm", "name": "unit"})
    assert status == 201
    job_id = json.loads(body)["id"]
    assert _post(base + "/api/v4/jobs/request", {"token": other})[0] == 204
    status, body = _post(base + "/api/v4/jobs/request", {"token": TOKEN})
    assert status == 201
    job = json.loads(body)
    assert job["id"] == job_id and job["image"] == {"name": "debian:bookworm"}
    assert job["steps"][0]["script"] == ["echo hi", "exit 7"]
    assert {"key": "GIT_STRATEGY", "value": "none", "public": True} in job["variables"]
    assert job["token"].startswith(gitlab_state.JOB_TOKEN_PREFIX)
    assert _post(base + "/api/v4/jobs/request", {"token": TOKEN})[0] == 204, "a job is handed out once"

    trace_url = f"{base}/api/v4/jobs/{job_id}/trace?debug_trace=false"
    headers = {"JOB-TOKEN": job["token"], "Content-Range": "0-5"}
    status, answer, _body = _call(trace_url, "PATCH", b"hello\n", headers)
    assert (status, answer["Range"]) == (202, "0-6")
    # A patch that does not start where the trace ends is refused with the length kept.
    status, answer, _body = _call(trace_url, "PATCH", b"again\n", dict(headers, **{"Content-Range": "0-5"}))
    assert (status, answer["Range"]) == (416, "0-6")
    assert _call(trace_url, "PATCH", b"x", {"JOB-TOKEN": "glcbt-wrong", "Content-Range": "6-6"})[0] == 403

    update = json.dumps({"token": job["token"], "state": "failed", "exit_code": 7,
                         "failure_reason": "script_failure"}).encode()
    status, answer, _body = _call(f"{base}/api/v4/jobs/{job_id}", "PUT", update, {"Content-Type": "application/json"})
    assert (status, answer["Job-Status"]) == (200, "failed")

    status, _headers, body = _call(f"{base}/gpuci-standin/jobs/{job_id}", "GET")
    seen = json.loads(body)
    assert (seen["state"], seen["exit_code"], seen["failure_reason"], seen["trace"]) == \
        ("failed", 7, "script_failure", "hello\n")
    assert "token" not in seen
    text = record.read_text()
    assert TOKEN not in text and job["token"] not in text
