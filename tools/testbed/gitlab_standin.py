# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A STAND-IN for GitLab's runner API, for the testbed's real node. Not GitLab.

GitLab itself is out of reach here. The real gitlab-runner managers on the
testbed's real node talk to this instead: it serves the documented subset of
the runner API (https://docs.gitlab.com/api/runners/ and the jobs endpoints a
runner uses) that a registered runner needs to take a job and run it:

    POST  /api/v4/runners/verify     a `glrt-` authentication token -> 200 (else 403)
    POST  /api/v4/jobs/request       201 and a job queued for this runner, else 204
    PUT   /api/v4/jobs/<id>          the job's state and exit code (JOB-TOKEN)
    PATCH /api/v4/jobs/<id>/trace    the job's log, appended by Content-Range (JOB-TOKEN)

and the subset of the REST API that creating and deleting runners with an
access token takes (what python-gitlab and community.general.gitlab_runner
call; the `PRIVATE-TOKEN` must start `glpat-`):

    GET    /api/v4/user, /api/v4/version
    GET    /api/v4/runners/all, /api/v4/projects/<id>/runners, /api/v4/groups/<id>/runners
    GET    /api/v4/projects/<id>, /api/v4/groups/<id>
    POST   /api/v4/user/runners      a new runner and its `glrt-` authentication token
    GET    /api/v4/runners/<id>      PUT to update it, DELETE to delete it

Tests queue jobs and read back jobs and runners through endpoints of the
stand-in's own (GitLab has none of these; the harness is the only client):

    POST  /gpuci-standin/jobs        {"runner_token_sha256", "script", "image", "variables"} -> {"id"}
    GET   /gpuci-standin/jobs/<id>   state, exit code, failure reason, trace
    GET   /gpuci-standin/runners     the runners created through the API (token fingerprints only)

A job goes only to the runner whose token matches the fingerprint it was queued
for, so a test chooses the pool. Jobs run with GIT_STRATEGY=none: there is no
repository to clone.

Every request is appended to a JSON-lines record (--record) with the endpoint,
the time and a SHA-256 prefix of the token it carried (never the token), so
tests can tell which token a runner used without the token being written
anywhere.

    gitlab_standin.py --listen 10.89.0.1:18880 --record FILE
"""
from __future__ import annotations

import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from lib.gitlab_state import (  # the script's own folder is on sys.path
    ACCESS_TOKEN_PREFIX, TOKEN_PREFIX, TRACE_UPDATE_INTERVAL_S, VERSION, JobBoard, RunnerRegistry,
    runner_id, token_fingerprint,
)

JOB_PATH = re.compile(r"^/api/v4/jobs/(\d+)(/trace)?(\?.*)?$")
HARNESS_JOB_PATH = re.compile(r"^/gpuci-standin/jobs/(\d+)$")
RUNNER_PATH = re.compile(r"^/api/v4/runners/(\d+)$")
OWNER_PATH = re.compile(r"^/api/v4/(projects|groups)/([^/?]+)(/runners)?$")
CONTENT_RANGE = re.compile(r"^(\d+)-(\d+)$")


class StandIn(BaseHTTPRequestHandler):
    server_version = "gpuci-gitlab-standin/1"
    record: Path
    board = JobBoard()
    registry = RunnerRegistry()
    lock = threading.Lock()

    def _raw_body(self) -> bytes:
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _body(self) -> dict:
        try:
            return json.loads(self._raw_body() or b"{}")
        except json.JSONDecodeError:
            return {}

    def _reply(self, status: int, payload: dict | None = None, headers: dict | None = None) -> None:
        data = json.dumps(payload).encode() if payload is not None else b""
        self.send_response(status)
        if payload is not None:
            self.send_header("Content-Type", "application/json")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _note(self, endpoint: str, token: str, status: int, **extra) -> None:
        line = json.dumps({"time": time.time(), "endpoint": endpoint, "status": status,
                           "token_sha256": token_fingerprint(token) if token else None, **extra})
        with self.lock, self.record.open("a") as handle:
            handle.write(line + "\n")

    def _answer(self, endpoint: str, token: str, status: int, payload=None, headers=None, **extra) -> None:
        # Recorded before the answer, so the record's order is the order of requests.
        self._note(endpoint, token, status, **extra)
        if status in (403, 404) and payload is None:
            payload = {"message": f"{status} {'Forbidden' if status == 403 else 'Not Found'} (gpuci GitLab stand-in)"}
        self._reply(status, payload, headers)

    def _runner_api(self, method: str, body: dict) -> bool:
        """Answer the access-token REST API (creating, reading, updating, deleting runners); False if not ours."""
        path = self.path.split("?", 1)[0]
        runner_match, owner_match = RUNNER_PATH.match(path), OWNER_PATH.match(path)
        if not (path in ("/api/v4/user", "/api/v4/version", "/api/v4/runners/all", "/api/v4/user/runners")
                or runner_match or owner_match):
            return False
        token = self.headers.get("PRIVATE-TOKEN", "")
        endpoint = RUNNER_PATH.sub("/api/v4/runners/:id", path)
        if not token.startswith(ACCESS_TOKEN_PREFIX):
            self._answer(endpoint, token, 401, {"message": "401 Unauthorized (gpuci GitLab stand-in)"})
            return True
        status, payload = 404, None
        if method == "GET" and path == "/api/v4/user":
            status, payload = 200, {"id": 1, "username": "gpuci-standin", "is_admin": True}
        elif method == "GET" and path == "/api/v4/version":
            status, payload = 200, VERSION
        elif method == "GET" and path == "/api/v4/runners/all":
            status, payload = 200, self.registry.listed()
        elif method == "POST" and path == "/api/v4/user/runners":
            status, payload = 201, self.registry.create(body)
        elif owner_match and method == "GET":
            kind, ident, runners = owner_match.groups()
            status = 200
            payload = self.registry.listed((kind, ident)) if runners else \
                {"id": int(ident) if ident.isdigit() else ident, "full_path": ident}
        elif runner_match:
            runner = int(runner_match.group(1))
            if method == "GET":
                payload = self.registry.get(runner)
            elif method == "PUT":
                payload = self.registry.update(runner, body)
            elif method == "DELETE":
                status = 204 if self.registry.delete(runner) else 404
            status = 200 if payload is not None else status
        # The record keeps which runner was made or touched, never a token.
        self._answer(endpoint, token, status, payload, runner=(payload or {}).get("id") if status == 201 else None)
        return True

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = self._body()
        if self._runner_api("POST", body):
            return
        if self.path == "/gpuci-standin/jobs":
            job_id = self.board.queue(body["runner_token_sha256"], body["script"], body["image"],
                                      body.get("variables"), body.get("name"))
            self._answer(self.path, "", 201, {"id": job_id}, job=job_id)
            return
        token = str(body.get("token", ""))
        known = token.startswith(TOKEN_PREFIX)
        if self.path == "/api/v4/runners/verify":
            payload = {"id": runner_id(token), "token": token, "token_expires_at": None} if known else None
            self._answer(self.path, token, 200 if known else 403, payload)
        elif self.path == "/api/v4/jobs/request":
            job = self.board.hand_out(token_fingerprint(token)) if known else None
            status = 403 if not known else 201 if job else 204
            self._answer(self.path, token, status, job, job=job and job["id"])
        else:
            self._answer(self.path, token, 404)

    def do_PUT(self) -> None:  # noqa: N802
        match = JOB_PATH.match(self.path)
        body = self._body()
        if self._runner_api("PUT", body):
            return
        token = str(body.get("token") or self.headers.get("JOB-TOKEN", ""))
        if not match or match.group(2):
            self._answer(self.path, token, 404)
            return
        job_id = int(match.group(1))
        state = self.board.update(job_id, token, body.get("state"), body.get("exit_code"), body.get("failure_reason"))
        if state is None:
            self._answer("/api/v4/jobs/:id", token, 403, job=job_id)
        else:
            self._answer("/api/v4/jobs/:id", token, 200, None, {"Job-Status": state}, job=job_id,
                         state=body.get("state"))

    def do_PATCH(self) -> None:  # noqa: N802
        match = JOB_PATH.match(self.path)
        token = self.headers.get("JOB-TOKEN", "")
        data = self._raw_body()
        content_range = CONTENT_RANGE.match(self.headers.get("Content-Range", ""))
        if not match or not match.group(2) or not content_range:
            self._answer(self.path, token, 404 if not content_range else 400)
            return
        job_id = int(match.group(1))
        result = self.board.append_trace(job_id, token, int(content_range.group(1)), data)
        if result is None:
            self._answer("/api/v4/jobs/:id/trace", token, 403, job=job_id)
            return
        status, length = result
        headers = {"Range": f"0-{length}", "Job-Status": "running",
                   "X-GitLab-Trace-Update-Interval": str(TRACE_UPDATE_INTERVAL_S)}
        self._answer("/api/v4/jobs/:id/trace", token, status, None, headers, job=job_id)

    def do_DELETE(self) -> None:  # noqa: N802
        if not self._runner_api("DELETE", {}):
            self._answer(self.path, "", 404)

    def do_GET(self) -> None:  # noqa: N802
        if self._runner_api("GET", {}):
            return
        if self.path == "/gpuci-standin/runners":
            self._reply(200, self.registry.describe())
            return
        match = HARNESS_JOB_PATH.match(self.path)
        job = self.board.describe(int(match.group(1))) if match else None
        self._reply(200 if job else 404, job or {"message": "404 Not Found (gpuci GitLab stand-in)"})

    def log_message(self, format, *args):  # noqa: A002 (http.server's signature)
        """Requests go to the record, which has no tokens; nothing else is printed."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--listen", required=True, help="HOST:PORT")
    parser.add_argument("--record", required=True, type=Path)
    args = parser.parse_args()
    host, port = args.listen.rsplit(":", 1)
    StandIn.record = args.record
    ThreadingHTTPServer((host, int(port)), StandIn).serve_forever()


if __name__ == "__main__":
    main()
