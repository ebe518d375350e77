# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the GitLab stand-in (tools/testbed/gitlab_standin.py) keeps: queued jobs and created runners.

The HTTP side lives in gitlab_standin.py; this is the state behind it, with
the rules GitLab applies (a job goes to one runner once, a trace grows only
from its end, tokens are shown once and recorded only as fingerprints).
"""
from __future__ import annotations

import hashlib
import secrets
import threading
import time
from collections import deque

TOKEN_PREFIX = "glrt-"
ACCESS_TOKEN_PREFIX = "glpat-"
VERSION = {"version": "18.9.0", "revision": "gpuci-standin"}
# GitLab's CI job tokens start so; the runner masks them in traces by prefix.
JOB_TOKEN_PREFIX = "glcbt-"
JOB_TIMEOUT_S = 600
# States after which GitLab answers a job update with "stop".
FINAL_STATES = ("success", "failed", "canceled")
# How often the runner should send the trace, in seconds (GitLab's header).
TRACE_UPDATE_INTERVAL_S = 1


def token_fingerprint(token: str) -> str:
    """What the record keeps of a token: enough to tell two apart, nothing to reuse."""
    return hashlib.sha256(token.encode()).hexdigest()[:16]


def runner_id(token: str) -> int:
    """A stable runner id per token, as GitLab would keep one per runner."""
    return int(token_fingerprint(token)[:6], 16)


def job_payload(job_id: int, job_token: str, job: dict) -> dict:
    """The job as GitLab hands it to a runner (the fields gitlab-runner 18.9 reads)."""
    variables = [{"key": "GIT_STRATEGY", "value": "none", "public": True}]
    variables += [{"key": k, "value": str(v), "public": True} for k, v in sorted(job.get("variables", {}).items())]
    return {
        "id": job_id,
        "token": job_token,
        "allow_git_fetch": False,
        "job_info": {"name": job.get("name", "gpuci-standin-job"), "stage": "test", "project_id": 1,
                     "project_name": "standin", "project_full_path": "gpuci/standin"},
        "git_info": {"repo_url": "", "ref": "main", "sha": "0" * 40, "before_sha": "0" * 40,
                     "ref_type": "branch", "refspecs": [], "depth": 0},
        "runner_info": {"timeout": JOB_TIMEOUT_S},
        "variables": variables,
        "steps": [{"name": "script", "script": list(job["script"]), "timeout": JOB_TIMEOUT_S,
                   "when": "on_success", "allow_failure": False}],
        "image": {"name": job["image"]},
        "services": [], "artifacts": [], "cache": [], "credentials": [], "dependencies": [],
        "features": {"trace_sections": True, "token_mask_prefixes": [JOB_TOKEN_PREFIX]},
    }


class JobBoard:
    """Jobs queued per runner token fingerprint, and what runners report about them."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queues: dict[str, deque[int]] = {}
        self._jobs: dict[int, dict] = {}

    def queue(self, runner_fingerprint: str, script: list[str], image: str, variables: dict | None = None,
              name: str | None = None) -> int:
        with self._lock:
            job_id = len(self._jobs) + 1
            self._jobs[job_id] = {
                "id": job_id, "runner_token_sha256": runner_fingerprint, "state": "pending",
                "token": JOB_TOKEN_PREFIX + secrets.token_urlsafe(18), "trace": b"", "exit_code": None,
                "failure_reason": None, "spec": {"script": script, "image": image,
                                                 "variables": variables or {}, "name": name or f"job-{job_id}"}}
            self._queues.setdefault(runner_fingerprint, deque()).append(job_id)
            return job_id

    def hand_out(self, runner_fingerprint: str) -> dict | None:
        """The payload of the next job queued for this runner, now running; None if there is none."""
        with self._lock:
            waiting = self._queues.get(runner_fingerprint)
            if not waiting:
                return None
            job = self._jobs[waiting.popleft()]
            job.update(state="running", started=time.time())
            return job_payload(job["id"], job["token"], job["spec"])

    def _job(self, job_id: int, job_token: str) -> dict | None:
        job = self._jobs.get(job_id)
        return job if job and job_token and secrets.compare_digest(job["token"], job_token) else None

    def update(self, job_id: int, job_token: str, state: str, exit_code, failure_reason) -> str | None:
        """Record a runner's job update; the job's state as GitLab would answer it, or None if unknown."""
        with self._lock:
            job = self._job(job_id, job_token)
            if job is None:
                return None
            if job["state"] not in FINAL_STATES:
                job.update(state=state or job["state"], exit_code=exit_code, failure_reason=failure_reason or None)
            return job["state"]

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

    def describe(self, job_id: int) -> dict | None:
        """What a test may read about a job: never its token."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return None
            return {"id": job_id, "state": job["state"], "exit_code": job["exit_code"],
                    "failure_reason": job["failure_reason"], "runner_token_sha256": job["runner_token_sha256"],
                    "trace": job["trace"].decode("utf-8", "replace")}


class RunnerRegistry:
    """Runners created through the API with an access token, as GitLab keeps them."""

    EDITABLE = ("description", "active", "paused", "tag_list", "run_untagged", "locked", "access_level",
                "maximum_timeout")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runners: dict[int, dict] = {}
        self._next_id = 1000

    def create(self, fields: dict) -> dict:
        """The new runner with its authentication token (GitLab shows it once)."""
        with self._lock:
            runner_id_ = self._next_id
            self._next_id += 1
            token = TOKEN_PREFIX + secrets.token_urlsafe(20)
            scope = {"instance_type": {}, "group_type": {"groups": [{"id": str(fields.get("group_id"))}]},
                     "project_type": {"projects": [{"id": str(fields.get("project_id"))}]}}
            runner_type = fields.get("runner_type", "instance_type")
            self._runners[runner_id_] = {
                "id": runner_id_, "runner_type": runner_type, "token": token, "active": True, "paused": False,
                "tag_list": [], "run_untagged": True, "locked": False, "access_level": "not_protected",
                "maximum_timeout": None, "description": "", **scope.get(runner_type, {}),
                **{k: v for k, v in fields.items() if k in self.EDITABLE}}
            return {"id": runner_id_, "token": token, "token_expires_at": None}

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
            runner.update({k: v for k, v in fields.items() if k in self.EDITABLE})
        return self.get(runner_id_)

    def delete(self, runner_id_: int) -> bool:
        with self._lock:
            return self._runners.pop(runner_id_, None) is not None

    def describe(self) -> list[dict]:
        """What a test may read: the runners, each token as a fingerprint."""
        with self._lock:
            return [{**{k: v for k, v in r.items() if k != "token"}, "token_sha256": token_fingerprint(r["token"])}
                    for r in self._runners.values()]
