# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A STAND-IN for GitLab, for the testbed's real node. Not GitLab.

GitLab itself is out of reach here. The real gitlab-runner managers on the
testbed's real node, their job pods and the tests talk to this instead. It
serves the documented subset of GitLab's API they use; this file is the HTTP
dispatch, the state and rules live in lib/gitlab_state.py (runners, jobs,
which runner takes which job), lib/gitlab_repos.py (projects' git
repositories), lib/gitlab_pipelines.py (.gitlab-ci.yml, pipelines) and
lib/gitlab_payload.py (the job a runner receives).

The runner API (https://docs.gitlab.com/api/runners/, the jobs endpoints a runner uses):

    POST  /api/v4/runners/verify     a `glrt-` authentication token -> 200 (else 403)
    POST  /api/v4/jobs/request       201 and the oldest pending job this runner may take, else 204
    PUT   /api/v4/jobs/<id>          the job's state and exit code (JOB-TOKEN)
    PATCH /api/v4/jobs/<id>/trace    the job's log, appended by Content-Range (JOB-TOKEN)

A job goes to a runner as GitLab routes it: its tags a subset of the runner's
tag_list; untagged only to a runner with run_untagged; none to a paused one.

Git over smart HTTP, for the job's clone (git-http-backend, fetch only):

    GET/POST /<project path>.git/... basic auth gitlab-ci-token:<a running job's token>, else 401

The REST API (a `PRIVATE-TOKEN` starting `glpat-`, else 401; a project by
numeric id or URL-encoded path, 404 if unknown): what creating and deleting
runners with an access token takes (python-gitlab, community.general.gitlab_runner)

    GET    /api/v4/user, /api/v4/version
    GET    /api/v4/runners/all, /api/v4/projects/<id>/runners, /api/v4/groups/<id>/runners
    GET    /api/v4/groups/<id>
    POST   /api/v4/user/runners      a new runner and its `glrt-` authentication token
    GET    /api/v4/runners/<id>      PUT to update it, DELETE to delete it

and what a canary needs (commit a file, run its pipeline, read the result):

    GET  /api/v4/projects/<id>
    GET  /api/v4/projects/<id>/repository/files/<file path>/raw?ref=R   the file's bytes (404 if absent)
    GET  /api/v4/projects/<id>/repository/files/<file path>?ref=R       JSON: content (base64), blob_id, last_commit_id
    POST /api/v4/projects/<id>/repository/commits   {branch, commit_message, actions: [{action, file_path, content}]}
    POST /api/v4/projects/<id>/pipeline             {ref}: one job per job of .gitlab-ci.yml at that ref
    GET  /api/v4/projects/<id>/pipelines/<pipeline id>, .../pipelines/<pipeline id>/jobs
    GET  /api/v4/projects/<id>/jobs/<job id>, .../jobs/<job id>/trace (text/plain)

The harness's own endpoints (GitLab has none of these; tests are the only client):

    POST /gpuci-standin/runners      {token, description, tag_list, run_untagged, paused}: a runner with that token
    GET  /gpuci-standin/runners      the runners (token fingerprints only)
    POST /gpuci-standin/jobs         {tags, script, image, variables, name, [project], [ref], [timeout]}
                                     -> {id, pipeline_id}; timeout: the job's, in seconds (default 600)
    GET  /gpuci-standin/jobs/<id>    state, exit code, failure reason, trace, tags, the runner that took it
    POST /gpuci-standin/jobs/<id>/cancel   cancel it as a user does in GitLab (running: `canceling`)
    POST /gpuci-standin/outage       {seconds}: stop listening that long, keeping every job and runner,
                                     as GitLab is unreachable during an upgrade (connections refused)

STAND-IN DIFFERENCES from GitLab (beside everything it does not serve):

- a `glrt-` token nobody created or seeded still verifies (200) and polls,
  as an untagged runner with run_untagged: tests that never register their
  placeholder tokens keep working; GitLab would answer 403;
- stages do not wait for one another, and most .gitlab-ci.yml keywords are
  ignored (lib/gitlab_pipelines.py says which are read);
- one user, an admin, whatever the access token; no protected branches, no
  pipeline refs (refs/pipelines/<id>): a job fetches its branch;
- no stuck-job worker: a running job whose runner vanished stays `running`
  here, where GitLab fails it (stuck_or_timeout_failure) once it has had no
  update for an hour.

Every request is appended to a JSON-lines record (--record) with the endpoint,
the time and a SHA-256 prefix of the token it carried (runner, job, access
token or basic-auth password; never the token itself), so tests can tell
which token a runner used without the token being written anywhere.

    gitlab_standin.py --listen 10.89.0.1:18880 --record FILE --repos DIR [--runners FILE]

--runners: a JSON list of {token, description, tag_list, run_untagged, paused},
runners made with those exact tokens, as a GitLab admin would have made them
in the UI before pasting the tokens into an inventory.
"""
from __future__ import annotations

import argparse
import base64
import json
import re
import shutil
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, unquote

# The script's own folder is on sys.path.
from lib.gitlab_payload import job_payload
from lib.gitlab_pipelines import CONFIG_FILE, ConfigError, Pipelines, job_object, parse_ci_config, pipeline_object, \
    rolled_up
from lib.gitlab_repos import DEFAULT_BRANCH, GitError, Repos
from lib.gitlab_state import (
    ACCESS_TOKEN_PREFIX, TRACE_UPDATE_INTERVAL_S, VERSION, JobBoard, RunnerRegistry, token_fingerprint,
)

CONTENT_RANGE = re.compile(r"^(\d+)-(\d+)$")
GIT_PATH = re.compile(r"^/(?P<project>[^?]+?)\.git(?P<rest>/.*)$")
PROJECT = r"/api/v4/projects/(?P<project>[^/]+)"
UNAUTHORIZED = {"message": "401 Unauthorized (gpuci GitLab stand-in)"}
# Long enough for a runner to notice, short enough that a test's mistake cannot stall the testbed.
MAX_OUTAGE_S = 120


def route(method: str, pattern: str, label: str, auth: str):
    """Mark a handler for `method` on paths matching `pattern`; `auth`: runner, job, private or harness."""
    def mark(handler):
        handler.route = (method, re.compile(f"^{pattern}$"), label, auth)
        return handler
    return mark


def reply(status: int, payload=None, headers: dict | None = None, **extra) -> tuple:
    """What a handler answers: status, payload (dict, list or bytes), headers, and extras for the record."""
    return status, payload, headers, extra


class StandIn(BaseHTTPRequestHandler):
    server_version = "gpuci-gitlab-standin/1"
    record: Path
    repos: Repos
    board: JobBoard
    registry: RunnerRegistry
    pipelines: Pipelines
    lock = threading.Lock()
    # Seconds of the outage asked for (POST /gpuci-standin/outage), read by serve().
    outage_s = 0

    @classmethod
    def configure(cls, record: Path, repos_dir: Path, runners: list[dict] | None = None) -> None:
        """Fresh state: the record, the projects' repositories, the seeded runners."""
        cls.record, cls.repos = Path(record), Repos(repos_dir)
        cls.board, cls.registry, cls.pipelines = JobBoard(), RunnerRegistry(), Pipelines()
        for runner in runners or []:
            cls.registry.seed(runner)

    # --- plumbing -------------------------------------------------------------------------------

    def _read_body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))
        # git sends large requests chunked.
        data = b""
        while size := int(self.rfile.readline().split(b";")[0].strip() or b"0", 16):
            data += self.rfile.read(size)
            self.rfile.readline()
        while self.rfile.readline().strip():  # trailers
            pass
        return data

    def _json(self) -> dict:
        try:
            body = json.loads(self.raw or b"{}")
        except (json.JSONDecodeError, UnicodeDecodeError):
            return {}
        return body if isinstance(body, dict) else {}

    def _server_url(self) -> str:
        # The address the client used: a job's clone URL must work from where the runner stands.
        host = self.headers.get("Host") or "%s:%d" % self.server.server_address[:2]
        return f"http://{host}"

    def _reply(self, status: int, payload=None, headers: dict | None = None) -> None:
        if isinstance(payload, bytes):
            data, kind = payload, "text/plain; charset=utf-8"
        else:
            data, kind = (json.dumps(payload).encode(), "application/json") if payload is not None else (b"", None)
        self.send_response(status)
        if kind:
            self.send_header("Content-Type", kind)
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
        if status in (400, 403, 404) and payload is None:
            reason = {400: "Bad Request", 403: "Forbidden", 404: "Not Found"}[status]
            payload = {"message": f"{status} {reason} (gpuci GitLab stand-in)"}
        self._reply(status, payload, headers)

    def _token(self, auth: str) -> str:
        """The token a request carries for its kind of endpoint."""
        if auth == "private":
            bearer = self.headers.get("Authorization", "")
            return self.headers.get("PRIVATE-TOKEN") or (bearer[7:] if bearer.startswith("Bearer ") else "")
        if auth == "harness":
            return ""
        return str(self._json().get("token") or self.headers.get("JOB-TOKEN", ""))

    def _handle(self, method: str) -> None:
        path, _mark, self.query = self.path.partition("?")
        self.raw = self._read_body()
        git = GIT_PATH.match(path)
        if git and not path.startswith(("/api/", "/gpuci-standin/")):
            self._git(method, git.group("project"), git.group("rest"))
            return
        for handler in HANDLERS:
            handler_method, pattern, label, auth = handler.route
            match = pattern.match(path)
            if match and handler_method == method:
                token = self._token(auth)
                if auth == "private" and not token.startswith(ACCESS_TOKEN_PREFIX):
                    self._answer(label, token, 401, UNAUTHORIZED)
                    return
                status, payload, headers, extra = handler(self, token, **match.groupdict())
                self._answer(label, token, status, payload, headers, **extra)
                return
        self._answer(path, self._token("runner") or self._token("private"), 404)

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def do_PUT(self) -> None:  # noqa: N802
        self._handle("PUT")

    def do_PATCH(self) -> None:  # noqa: N802
        self._handle("PATCH")

    def do_DELETE(self) -> None:  # noqa: N802
        self._handle("DELETE")

    def log_message(self, format, *args):  # noqa: A002 (http.server's signature)
        """Requests go to the record, which has no tokens; nothing else is printed."""

    # --- git over smart HTTP ----------------------------------------------------------------------

    def _git(self, method: str, project_path: str, rest: str) -> None:
        """Serve a clone or fetch with git-http-backend, to a running job of this project (as GitLab does)."""
        project = self.repos.find_by_path(project_path)
        label = f"/{project_path}.git{rest}"
        user, password = "", ""
        auth = self.headers.get("Authorization", "")
        if auth.startswith("Basic "):
            try:
                user, _colon, password = base64.b64decode(auth[6:]).decode().partition(":")
            except (ValueError, UnicodeDecodeError):
                pass
        if project is None:
            self._answer(label, password, 404)
            return
        job = self.board.running_job_for(password) if user == "gitlab-ci-token" and password else None
        if job is None or job["project"]["id"] != project["id"]:
            self._answer(label, password, 401, UNAUTHORIZED, {"WWW-Authenticate": 'Basic realm="GitLab"'})
            return
        if "receive-pack" in rest or "receive-pack" in self.query:
            self._answer(label, password, 403, job=job["id"])
            return
        process = self.repos.http_backend(project, rest, method, self.query, self.headers, self.raw, user)
        status, headers = 200, []
        while (line := process.stdout.readline().rstrip(b"\r\n")):
            name, _colon, value = line.decode("latin-1").partition(":")
            if name.lower() == "status":
                status = int(value.split()[0])
            else:
                headers.append((name, value.strip()))
        self._note(label, password, status, job=job["id"])
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        # No Content-Length: the body streams until the backend ends, and HTTP/1.0 closes the connection.
        shutil.copyfileobj(process.stdout, self.wfile)
        process.wait()

    # --- the runner API -------------------------------------------------------------------------

    @route("POST", "/api/v4/runners/verify", "/api/v4/runners/verify", "runner")
    def _verify(self, token):
        runner = self.registry.for_token(token)
        if runner is None:
            return reply(403)
        return reply(200, {"id": runner["id"], "token": token, "token_expires_at": None})

    @route("POST", "/api/v4/jobs/request", "/api/v4/jobs/request", "runner")
    def _request_job(self, token):
        runner = self.registry.for_token(token)
        if runner is None:
            return reply(403)
        job = self.board.hand_out(runner, token)
        if job is None:
            return reply(204)
        return reply(201, job_payload(job, job["token"], self._server_url()), job=job["id"], runner=runner["id"])

    @route("PUT", r"/api/v4/jobs/(?P<job_id>\d+)", "/api/v4/jobs/:id", "job")
    def _update_job(self, token, job_id):
        body = self._json()
        state = self.board.update(int(job_id), token, body.get("state"), body.get("exit_code"),
                                  body.get("failure_reason"))
        if state is None:
            return reply(403, job=int(job_id))
        return reply(200, None, {"Job-Status": state}, job=int(job_id), state=body.get("state"))

    @route("PATCH", r"/api/v4/jobs/(?P<job_id>\d+)/trace", "/api/v4/jobs/:id/trace", "job")
    def _patch_trace(self, token, job_id):
        content_range = CONTENT_RANGE.match(self.headers.get("Content-Range", ""))
        if not content_range:
            return reply(400, job=int(job_id))
        result = self.board.append_trace(int(job_id), token, int(content_range.group(1)), self.raw)
        if result is None:
            return reply(403, job=int(job_id))
        status, length = result
        headers = {"Range": f"0-{length}", "Job-Status": self.board.state(int(job_id)),
                   "X-GitLab-Trace-Update-Interval": str(TRACE_UPDATE_INTERVAL_S)}
        return reply(status, None, headers, job=int(job_id))

    # --- the REST API: runners --------------------------------------------------------------------

    @route("GET", "/api/v4/user", "/api/v4/user", "private")
    def _user(self, token):
        return reply(200, {"id": 1, "username": "gpuci-standin", "is_admin": True})

    @route("GET", "/api/v4/version", "/api/v4/version", "private")
    def _version(self, token):
        return reply(200, VERSION)

    @route("GET", "/api/v4/runners/all", "/api/v4/runners/all", "private")
    def _all_runners(self, token):
        return reply(200, self.registry.listed())

    @route("POST", "/api/v4/user/runners", "/api/v4/user/runners", "private")
    def _create_runner(self, token):
        created = self.registry.create(self._json())
        # The record keeps which runner was made, never its token.
        return reply(201, created, runner=created["id"])

    @route("GET", r"/api/v4/(?P<kind>projects|groups)/(?P<ident>[^/]+)/runners", "/api/v4/:owner/:id/runners",
           "private")
    def _owner_runners(self, token, kind, ident):
        return reply(200, self.registry.listed((kind, unquote(ident))))

    @route("GET", r"/api/v4/groups/(?P<ident>[^/]+)", "/api/v4/groups/:id", "private")
    def _group(self, token, ident):
        # Groups have no state here: any group exists.
        return reply(200, {"id": int(ident) if ident.isdigit() else ident, "full_path": unquote(ident)})

    @route("GET", r"/api/v4/runners/(?P<runner>\d+)", "/api/v4/runners/:id", "private")
    def _get_runner(self, token, runner):
        found = self.registry.get(int(runner))
        return reply(200, found) if found else reply(404)

    @route("PUT", r"/api/v4/runners/(?P<runner>\d+)", "/api/v4/runners/:id", "private")
    def _update_runner(self, token, runner):
        found = self.registry.update(int(runner), self._json())
        return reply(200, found) if found else reply(404)

    @route("DELETE", r"/api/v4/runners/(?P<runner>\d+)", "/api/v4/runners/:id", "private")
    def _delete_runner(self, token, runner):
        return reply(204 if self.registry.delete(int(runner)) else 404)

    # --- the REST API: projects, files, commits, pipelines, jobs -----------------------------------

    def _project_object(self, project: dict) -> dict:
        url = f"{self._server_url()}/{project['path']}"
        namespace, _slash, name = project["path"].rpartition("/")
        return {"id": project["id"], "name": name, "path": name, "path_with_namespace": project["path"],
                "name_with_namespace": project["path"].replace("/", " / "), "default_branch": DEFAULT_BRANCH,
                "web_url": url, "http_url_to_repo": f"{url}.git", "visibility": "private",
                "namespace": {"full_path": namespace, "path": namespace.rsplit("/", 1)[-1]},
                # The stand-in's one user maintains every project.
                "permissions": {"project_access": {"access_level": 40, "notification_level": 3},
                                "group_access": None}}

    def _param(self, name: str, default: str | None = None) -> str | None:
        """A parameter from the JSON body or the query string, as GitLab takes either."""
        return self._json().get(name) or parse_qs(self.query).get(name, [default])[-1]

    @route("GET", PROJECT, "/api/v4/projects/:id", "private")
    def _project(self, token, project):
        found = self.repos.find(project)
        return reply(200, self._project_object(found)) if found else reply(404)

    @route("GET", PROJECT + r"/repository/files/(?P<file_path>[^/]+)(?P<raw>/raw)?",
           "/api/v4/projects/:id/repository/files/:file_path", "private")
    def _file(self, token, project, file_path, raw):
        found = self.repos.find(project)
        ref = self._param("ref", DEFAULT_BRANCH)
        file = self.repos.read_file(found, unquote(file_path), ref) if found else None
        if file is None:
            return reply(404, {"message": "404 File Not Found"})
        if raw:
            return reply(200, file["content"], {"X-Gitlab-Blob-Id": file["blob_id"]})
        path = unquote(file_path)
        return reply(200, {"file_name": path.rsplit("/", 1)[-1], "file_path": path, "size": len(file["content"]),
                           "encoding": "base64", "content": base64.b64encode(file["content"]).decode(),
                           "ref": ref, "blob_id": file["blob_id"], "commit_id": file["commit_id"],
                           "last_commit_id": file["last_commit_id"]})

    @route("POST", PROJECT + "/repository/commits", "/api/v4/projects/:id/repository/commits", "private")
    def _commit(self, token, project):
        found = self.repos.find(project)
        if found is None:
            return reply(404)
        body = self._json()
        try:
            commit = self.repos.commit(found, body.get("branch", ""), body.get("commit_message", ""),
                                       body.get("actions") or [])
        except GitError as error:
            return reply(400, {"message": str(error)})
        commit["web_url"] = f"{self._server_url()}/{found['path']}/-/commit/{commit['id']}"
        return reply(201, commit, commit=commit["id"])

    def _queue_pipeline(self, project: dict, ref: str, jobs: list[dict], source: str) -> dict | tuple:
        """A pipeline of these jobs at the head of `ref`, queued; or the 400 reply if the ref is unknown."""
        sha = self.repos.head(project, ref)
        if sha is None:
            return reply(400, {"message": {"base": ["Reference not found"]}})
        pipeline = self.pipelines.create(project, ref, sha, source)
        for spec in jobs:
            spec = {**spec, "project": project, "ref": ref, "sha": sha, "pipeline_id": pipeline["id"]}
            self.board.queue(spec)
        return pipeline

    @route("POST", PROJECT + "/pipeline", "/api/v4/projects/:id/pipeline", "private")
    def _create_pipeline(self, token, project):
        found = self.repos.find(project)
        if found is None:
            return reply(404)
        ref = self._param("ref") or ""
        config = self.repos.read_file(found, CONFIG_FILE, ref)
        if config is None:
            known = self.repos.head(found, ref) is not None
            return reply(400, {"message": {"base": ["Missing CI config file" if known else "Reference not found"]}})
        try:
            jobs = parse_ci_config(config["content"].decode())
        except ConfigError as error:
            return reply(400, {"message": {"base": [str(error)]}})
        # Pipeline variables take precedence over the file's, as in GitLab.
        extra = {v["key"]: str(v.get("value", "")) for v in self._json().get("variables") or []}
        pipeline = self._queue_pipeline(found, ref, [{**j, "variables": {**j["variables"], **extra}} for j in jobs],
                                        "api")
        if isinstance(pipeline, tuple):
            return pipeline
        return reply(201, pipeline_object(pipeline, self.board.of_pipeline(pipeline["id"]), found,
                                          self._server_url()), pipeline=pipeline["id"])

    def _pipeline_of(self, project: str, pipeline_id: str) -> tuple[dict, dict, list[dict]] | None:
        found = self.repos.find(project)
        pipeline = self.pipelines.get(found, int(pipeline_id)) if found else None
        return (found, pipeline, self.board.of_pipeline(pipeline["id"])) if pipeline else None

    @route("GET", PROJECT + r"/pipelines/(?P<pipeline_id>\d+)", "/api/v4/projects/:id/pipelines/:pipeline_id",
           "private")
    def _pipeline(self, token, project, pipeline_id):
        found = self._pipeline_of(project, pipeline_id)
        return reply(200, pipeline_object(found[1], found[2], found[0], self._server_url())) if found else reply(404)

    @route("GET", PROJECT + r"/pipelines/(?P<pipeline_id>\d+)/jobs",
           "/api/v4/projects/:id/pipelines/:pipeline_id/jobs", "private")
    def _pipeline_jobs(self, token, project, pipeline_id):
        found = self._pipeline_of(project, pipeline_id)
        if found is None:
            return reply(404)
        project_, jobs = found[0], found[2]
        status = rolled_up([j["state"] for j in jobs])
        return reply(200, [job_object(j, project_, status, self._server_url()) for j in jobs])

    def _job_of(self, project: str, job_id: str) -> tuple[dict, dict] | None:
        found = self.repos.find(project)
        job = self.board.get(int(job_id))
        return (found, job) if found and job and job["project"]["id"] == found["id"] else None

    @route("GET", PROJECT + r"/jobs/(?P<job_id>\d+)", "/api/v4/projects/:id/jobs/:job_id", "private")
    def _job(self, token, project, job_id):
        found = self._job_of(project, job_id)
        if found is None:
            return reply(404)
        project_, job = found
        status = rolled_up([j["state"] for j in self.board.of_pipeline(job["pipeline_id"])])
        return reply(200, job_object(job, project_, status, self._server_url()))

    @route("GET", PROJECT + r"/jobs/(?P<job_id>\d+)/trace", "/api/v4/projects/:id/jobs/:job_id/trace", "private")
    def _job_trace(self, token, project, job_id):
        found = self._job_of(project, job_id)
        return reply(200, found[1]["trace"]) if found else reply(404)

    # --- the harness's own endpoints ------------------------------------------------------------

    @route("POST", "/gpuci-standin/runners", "/gpuci-standin/runners", "harness")
    def _seed_runner(self, token):
        try:
            runner = self.registry.seed(self._json())
        except ValueError as error:
            return reply(400, {"message": str(error)})
        return reply(201, runner, runner=runner["id"])

    @route("GET", "/gpuci-standin/runners", "/gpuci-standin/runners", "harness")
    def _runners(self, token):
        return reply(200, self.registry.describe())

    @route("POST", "/gpuci-standin/jobs", "/gpuci-standin/jobs", "harness")
    def _queue_job(self, token):
        body = self._json()
        project = self.repos.find(str(body.get("project", 1)))
        if project is None:
            return reply(404)
        script = body.get("script")
        if isinstance(script, str):
            script = [script]
        if not script or not all(isinstance(line, str) for line in script):
            return reply(400, {"message": "script: a list of strings"})
        spec = {"name": body.get("name"), "tags": [str(t) for t in body.get("tags") or []], "script": script,
                "image": body.get("image"), "variables": {k: str(v) for k, v in (body.get("variables") or {}).items()}}
        if body.get("timeout") is not None:
            if not isinstance(body["timeout"], int) or body["timeout"] < 1:
                return reply(400, {"message": "timeout: a whole number of seconds"})
            spec["timeout"] = body["timeout"]
        pipeline = self._queue_pipeline(project, body.get("ref") or DEFAULT_BRANCH, [spec], "api")
        if isinstance(pipeline, tuple):
            return pipeline
        job_id = self.board.of_pipeline(pipeline["id"])[0]["id"]
        return reply(201, {"id": job_id, "pipeline_id": pipeline["id"]}, job=job_id)

    @route("GET", r"/gpuci-standin/jobs/(?P<job_id>\d+)", "/gpuci-standin/jobs/:id", "harness")
    def _describe_job(self, token, job_id):
        job = self.board.describe(int(job_id))
        return reply(200, job) if job else reply(404)

    @route("POST", r"/gpuci-standin/jobs/(?P<job_id>\d+)/cancel", "/gpuci-standin/jobs/:id/cancel", "harness")
    def _cancel_job(self, token, job_id):
        state = self.board.cancel(int(job_id))
        return reply(200, {"id": int(job_id), "state": state}, job=int(job_id)) if state else reply(404)

    @route("POST", "/gpuci-standin/outage", "/gpuci-standin/outage", "harness")
    def _outage(self, token):
        seconds = self._json().get("seconds")
        if not isinstance(seconds, int) or not 1 <= seconds <= MAX_OUTAGE_S:
            return reply(400, {"message": f"seconds: a whole number from 1 to {MAX_OUTAGE_S}"})
        # This answer goes out on the connection already accepted; then the
        # listening socket closes (serve() reopens it after `seconds`).
        type(self).outage_s = seconds
        threading.Thread(target=self.server.shutdown, daemon=True).start()
        return reply(202, {"outage_s": seconds})


# Every routed handler, in the order they are tried.
HANDLERS = [h for h in vars(StandIn).values() if callable(h) and hasattr(h, "route")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--listen", required=True, help="HOST:PORT")
    parser.add_argument("--record", required=True, type=Path)
    parser.add_argument("--repos", required=True, type=Path, help="the projects' bare repositories (kept)")
    parser.add_argument("--runners", type=Path, help="a JSON list of runners to make with the tokens given")
    args = parser.parse_args()
    host, port = args.listen.rsplit(":", 1)
    StandIn.configure(args.record, args.repos, json.loads(args.runners.read_text()) if args.runners else None)
    serve((host, int(port)))


def serve(address: tuple[str, int]) -> None:
    """Serve until killed; after an outage request, stop listening for its seconds, then listen again."""
    while True:
        server = ThreadingHTTPServer(address, StandIn)
        server.serve_forever(poll_interval=0.2)
        server.server_close()
        time.sleep(StandIn.outage_s)
        StandIn.outage_s = 0


if __name__ == "__main__":
    main()
