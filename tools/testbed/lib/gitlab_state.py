# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the GitLab STAND-IN (tools/testbed/gitlab_standin.py) keeps: runners, jobs, and which runner takes which job.

Not GitLab. The HTTP side lives in gitlab_standin.py; this is the state
behind it, with the rules GitLab documents:

- a job goes to a runner only if the job's tags are a subset of the runner's
  tag_list; an untagged job only to a runner with run_untagged; a paused
  runner (paused, or active false) gets nothing
  (https://docs.gitlab.com/ci/runners/configure_runners/#control-jobs-that-a-runner-can-run);
- a runner polling for a job gets the oldest pending job it may take, once;
- a trace grows only from its end;
- tokens are shown once and recorded only as fingerprints.
"""
from __future__ import annotations

import hashlib
import secrets
import threading
import time

TOKEN_PREFIX = "glrt-"
ACCESS_TOKEN_PREFIX = "glpat-"
VERSION = {"version": "18.9.0", "revision": "gpuci-standin"}
# GitLab's CI job tokens start so; the runner masks them in traces by prefix.
JOB_TOKEN_PREFIX = "glcbt-"
JOB_TIMEOUT_S = 600
# States after which GitLab answers a job update with "stop".
FINAL_STATES = ("success", "failed", "canceled")
# A running job a user cancelled, until its runner has stopped it.
CANCELING = "canceling"
# How often the runner should send the trace, in seconds (GitLab's header).
TRACE_UPDATE_INTERVAL_S = 1
# The fields a runner has in GitLab that an access token may set (POST /user/runners, PUT /runners/:id)
# and that a seed file or the harness may give.
RUNNER_FIELDS = ("description", "active", "paused", "tag_list", "run_untagged", "locked", "access_level",
                 "maximum_timeout")


def token_fingerprint(token: str) -> str:
    """What the record keeps of a token: enough to tell two apart, nothing to reuse."""
    return hashlib.sha256(token.encode()).hexdigest()[:16]


def runner_id(token: str) -> int:
    """A stable runner id for a token the stand-in was never told about."""
    return int(token_fingerprint(token)[:6], 16)


def iso_time(when: float | None) -> str | None:
    """A time as GitLab's API writes it."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(when)) + f".{int(when % 1 * 1000):03d}Z" \
        if when is not None else None


def _flag(value) -> bool:
    # JSON clients send booleans; form-style clients and YAML seeds may send strings.
    return value.strip().lower() in ("true", "1", "yes") if isinstance(value, str) else bool(value)


def _tags(value) -> list[str]:
    # GitLab takes tag_list as an array or a comma-separated string.
    items = value.split(",") if isinstance(value, str) else value or []
    return [str(t).strip() for t in items if str(t).strip()]


def _normalised(fields: dict) -> dict:
    out = {k: v for k, v in fields.items() if k in RUNNER_FIELDS}
    for key in ("active", "paused", "run_untagged", "locked"):
        if key in out:
            out[key] = _flag(out[key])
    if "tag_list" in out:
        out["tag_list"] = _tags(out["tag_list"])
    return out


def may_take(runner: dict, tags: list[str]) -> bool:
    """GitLab's rule: may this runner take a job with these tags?"""
    if runner.get("paused") or not runner.get("active", True):
        return False
    if not tags:
        return bool(runner.get("run_untagged"))
    return set(tags) <= set(runner.get("tag_list", []))


class RunnerRegistry:
    """Runners as GitLab keeps them: created through the API, or seeded as an admin would have made them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runners: dict[int, dict] = {}
        self._next_id = 1000

    def _add(self, token: str, fields: dict) -> dict:
        runner_id_ = self._next_id
        self._next_id += 1
        scope = {"instance_type": {}, "group_type": {"groups": [{"id": str(fields.get("group_id"))}]},
                 "project_type": {"projects": [{"id": str(fields.get("project_id"))}]}}
        runner_type = fields.get("runner_type", "instance_type")
        self._runners[runner_id_] = {
            "id": runner_id_, "runner_type": runner_type, "token": token, "active": True, "paused": False,
            "tag_list": [], "run_untagged": True, "locked": False, "access_level": "not_protected",
            "maximum_timeout": None, "description": "", **scope.get(runner_type, {}), **_normalised(fields)}
        return self._runners[runner_id_]

    def create(self, fields: dict) -> dict:
        """A new runner with its authentication token (GitLab shows it once): POST /user/runners."""
        with self._lock:
            runner = self._add(TOKEN_PREFIX + secrets.token_urlsafe(20), fields)
            return {"id": runner["id"], "token": runner["token"], "token_expires_at": None}

    def seed(self, fields: dict) -> dict:
        """A runner with the token given (what an admin made in GitLab's UI); a known token's runner is updated.

        Returns the runner without its token."""
        token = str(fields.get("token", ""))
        if not token.startswith(TOKEN_PREFIX):
            raise ValueError(f"a seeded runner needs a {TOKEN_PREFIX} token")
        with self._lock:
            runner = next((r for r in self._runners.values() if secrets.compare_digest(r["token"], token)), None)
            if runner is None:
                runner = self._add(token, fields)
            else:
                runner.update(_normalised(fields))
            return {k: v for k, v in runner.items() if k != "token"}

    def for_token(self, token: str) -> dict | None:
        """The runner a `glrt-` token authenticates, without its token; None for any other token.

        STAND-IN LENIENCY: a `glrt-` token nobody created or seeded is taken as
        an untagged runner with run_untagged (GitLab would answer 403), so the
        placeholders of tests that never register their runners still verify."""
        if not token.startswith(TOKEN_PREFIX):
            return None
        with self._lock:
            runner = next((r for r in self._runners.values() if secrets.compare_digest(r["token"], token)), None)
            if runner is not None:
                return {k: v for k, v in runner.items() if k != "token"}
        return {"id": runner_id(token), "description": "", "tag_list": [], "run_untagged": True, "paused": False,
                "active": True, "runner_type": "instance_type", "unknown_token": True}

    def listed(self, owner: tuple[str, str] | None = None) -> list[dict]:
        """Runners as GitLab lists them (no token); `owner` ("projects"|"groups", id) narrows the list."""
        with self._lock:
            runners = list(self._runners.values())
        if owner:
            kind, ident = owner
            runners = [r for r in runners if any(o["id"] == ident for o in r.get(kind, []))]
        return [{"id": r["id"], "description": r["description"], "active": r["active"], "paused": r["paused"],
                 "runner_type": r["runner_type"], "is_shared": r["runner_type"] == "instance_type"} for r in runners]

    def get(self, runner_id_: int) -> dict | None:
        with self._lock:
            runner = self._runners.get(runner_id_)
            return {k: v for k, v in runner.items() if k != "token"} if runner else None

    def update(self, runner_id_: int, fields: dict) -> dict | None:
        with self._lock:
            runner = self._runners.get(runner_id_)
            if runner is None:
                return None
            runner.update(_normalised(fields))
        return self.get(runner_id_)

    def delete(self, runner_id_: int) -> bool:
        with self._lock:
            return self._runners.pop(runner_id_, None) is not None

    def describe(self) -> list[dict]:
        """What a test may read: the runners, each token as a fingerprint."""
        with self._lock:
            return [{**{k: v for k, v in r.items() if k != "token"}, "token_sha256": token_fingerprint(r["token"])}
                    for r in self._runners.values()]


class JobBoard:
    """Jobs in the order they were queued, which runner took each, and what it reported.

    A job is a dict: id, name, stage, tags, script, image, variables,
    project ({id, path}), ref, sha, pipeline_id, state, token (the job
    token: never leaves through describe()), runner (who took it), trace,
    exit_code, failure_reason and its times."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._jobs: dict[int, dict] = {}

    def queue(self, spec: dict) -> int:
        with self._lock:
            job_id = len(self._jobs) + 1
            self._jobs[job_id] = {
                "stage": "test", "tags": [], "variables": {}, "image": None, **spec,
                "name": spec.get("name") or f"job-{job_id}", "id": job_id, "state": "pending",
                "token": JOB_TOKEN_PREFIX + secrets.token_urlsafe(18), "runner": None, "trace": b"",
                "exit_code": None, "failure_reason": None, "created": time.time(), "started": None,
                "finished": None}
            return job_id

    def hand_out(self, runner: dict, runner_token: str) -> dict | None:
        """The oldest pending job this runner may take, now running (with its job token); None if none."""
        with self._lock:
            job = next((j for j in self._jobs.values() if j["state"] == "pending" and may_take(runner, j["tags"])),
                       None)
            if job is None:
                return None
            job.update(state="running", started=time.time(),
                       runner={"id": runner["id"], "description": runner.get("description", ""),
                               "token_sha256": token_fingerprint(runner_token)})
            return dict(job)

    def _job(self, job_id: int, job_token: str) -> dict | None:
        job = self._jobs.get(job_id)
        return job if job and job_token and secrets.compare_digest(job["token"], job_token) else None

    def running_job_for(self, job_token: str) -> dict | None:
        """The running job this job token belongs to (what GitLab lets clone its project), else None."""
        with self._lock:
            return next(({k: v for k, v in j.items() if k != "token"} for j in self._jobs.values()
                         if j["state"] == "running" and secrets.compare_digest(j["token"], job_token)), None)

    def update(self, job_id: int, job_token: str, state: str, exit_code, failure_reason) -> str | None:
        """Record a runner's job update; the job's state as GitLab would answer it, or None if unknown.

        A job being cancelled stays `canceling` while the runner still
        reports it running, and becomes `canceled` (whatever final state the
        runner sends) once the runner has stopped it, as GitLab does."""
        with self._lock:
            job = self._job(job_id, job_token)
            if job is None:
                return None
            if job["state"] == CANCELING:
                if state in FINAL_STATES:
                    job.update(state="canceled", exit_code=exit_code, failure_reason=failure_reason or None,
                               finished=time.time())
            elif job["state"] not in FINAL_STATES:
                job.update(state=state or job["state"], exit_code=exit_code, failure_reason=failure_reason or None)
                if job["state"] in FINAL_STATES:
                    job["finished"] = time.time()
            return job["state"]

    def cancel(self, job_id: int) -> str | None:
        """Cancel a job as a user does in GitLab's UI; its state after, or None if unknown.

        A pending job is `canceled` at once. A running one becomes
        `canceling`: the runner learns it from the Job-Status of its next
        trace patch or job update (GitLab's graceful cancel, which GitLab
        Runner asks for with features.cancel_gracefully) and stops the job."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return None
            if job["state"] == "pending":
                job.update(state="canceled", finished=time.time())
            elif job["state"] == "running":
                job["state"] = CANCELING
            return job["state"]

    def state(self, job_id: int) -> str | None:
        with self._lock:
            job = self._jobs.get(job_id)
            return job["state"] if job else None

    def append_trace(self, job_id: int, job_token: str, start: int, data: bytes) -> tuple[int, int] | None:
        """(HTTP status, trace length after the patch); None if the job or its token is unknown.

        A patch must start where the trace ends (GitLab answers 416 and the
        length it has otherwise, and the runner resends from there)."""
        with self._lock:
            job = self._job(job_id, job_token)
            if job is None:
                return None
            if start != len(job["trace"]):
                return 416, len(job["trace"])
            job["trace"] += data
            return 202, len(job["trace"])

    def get(self, job_id: int) -> dict | None:
        """A copy of the job without its token."""
        with self._lock:
            job = self._jobs.get(job_id)
            return {k: v for k, v in job.items() if k != "token"} if job else None

    def of_pipeline(self, pipeline_id: int) -> list[dict]:
        """The pipeline's jobs in queue order, without their tokens."""
        with self._lock:
            return [{k: v for k, v in j.items() if k != "token"} for j in self._jobs.values()
                    if j.get("pipeline_id") == pipeline_id]

    def describe(self, job_id: int) -> dict | None:
        """What a test may read about a job: never its token."""
        job = self.get(job_id)
        if job is None:
            return None
        return {"id": job_id, "name": job["name"], "state": job["state"], "exit_code": job["exit_code"],
                "failure_reason": job["failure_reason"], "tags": job["tags"], "runner": job["runner"],
                "project": job["project"]["path"], "ref": job["ref"], "sha": job["sha"],
                "pipeline_id": job.get("pipeline_id"), "trace": job["trace"].decode("utf-8", "replace")}
