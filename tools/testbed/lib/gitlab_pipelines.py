# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Pipelines of the GitLab STAND-IN: a subset of `.gitlab-ci.yml`, and pipelines and jobs as GitLab's REST API shows them.

Not GitLab. The subset of https://docs.gitlab.com/ci/yaml/ it reads:

- every top-level mapping is a job, except the keywords `stages`, `default`,
  `variables`, `workflow`, `include`, `image`, `services`, `cache`,
  `before_script`, `after_script` and hidden jobs (names starting with `.`);
- a job's `script` (a string or a list; required), `before_script` (put in
  front of it, as the runner does), `tags`, `image` (a string or {name}),
  `variables` (top-level ones merged under the job's) and `stage`;
  `default:` gives `image`, `tags` and `before_script` to jobs without them.

STAND-IN DIFFERENCES: stages do not wait for one another (every job is
pending at once); `rules`, `only`, `when`, `needs`, `extends`, `artifacts`,
`services` and every other keyword are ignored, not refused.
"""
from __future__ import annotations

import threading
import time

import yaml

from .gitlab_state import iso_time

CONFIG_FILE = ".gitlab-ci.yml"
NOT_JOBS = {"stages", "default", "variables", "workflow", "include", "image", "services", "cache",
            "before_script", "after_script"}


class ConfigError(ValueError):
    """A config GitLab would refuse (the API answers 400 with the message)."""


def _script(value, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(line, str) for line in value):
        return list(value)
    raise ConfigError(f"{where} config should be a string or a nested array of strings up to 10 levels deep")


def _image(value) -> str | None:
    return value.get("name") if isinstance(value, dict) else value


def _variables(value) -> dict[str, str]:
    # A variable may be a value or {value, description}.
    return {str(k): str(v.get("value", "") if isinstance(v, dict) else v) for k, v in (value or {}).items()}


def parse_ci_config(text: str) -> list[dict]:
    """The jobs of a `.gitlab-ci.yml`, in file order: [{name, stage, script, tags, image, variables}]."""
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"Invalid configuration format: {error}") from error
    if not isinstance(config, dict):
        raise ConfigError("Invalid configuration format")
    default = config.get("default") or {}
    default_image = _image(default.get("image", config.get("image")))
    default_before = default.get("before_script", config.get("before_script"))
    top_variables = _variables(config.get("variables"))
    jobs = []
    for name, body in config.items():
        if name in NOT_JOBS or str(name).startswith("."):
            continue
        if not isinstance(body, dict) or "script" not in body:
            raise ConfigError(f"jobs:{name} config should implement a script: or a trigger: keyword")
        before = body.get("before_script", default_before)
        jobs.append({
            "name": str(name), "stage": str(body.get("stage", "test")),
            "script": (_script(before, f"jobs:{name}:before_script") if before else [])
            + _script(body["script"], f"jobs:{name}:script"),
            "tags": [str(t) for t in body.get("tags", default.get("tags")) or []],
            "image": _image(body.get("image")) or default_image,
            "variables": {**top_variables, **_variables(body.get("variables"))},
        })
    if not jobs:
        raise ConfigError("No stages / jobs for this pipeline.")
    return jobs


def rolled_up(states: list[str]) -> str:
    """A pipeline's status from its jobs', as GitLab composes it."""
    if not states or all(s == "pending" for s in states):
        return "pending"
    if any(s in ("pending", "running") for s in states):
        return "running"
    if "failed" in states:
        return "failed"
    return "canceled" if "canceled" in states else "success"


class Pipelines:
    """Pipelines by id: project, ref, sha and when they were made (their jobs live on the JobBoard)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pipelines: dict[int, dict] = {}

    def create(self, project: dict, ref: str, sha: str, source: str) -> dict:
        with self._lock:
            pipeline_id = len(self._pipelines) + 1
            self._pipelines[pipeline_id] = {"id": pipeline_id, "project_id": project["id"], "ref": ref, "sha": sha,
                                            "source": source, "created": time.time()}
            return dict(self._pipelines[pipeline_id])

    def get(self, project: dict, pipeline_id: int) -> dict | None:
        with self._lock:
            pipeline = self._pipelines.get(pipeline_id)
            return dict(pipeline) if pipeline and pipeline["project_id"] == project["id"] else None


def pipeline_object(pipeline: dict, jobs: list[dict], project: dict, server_url: str) -> dict:
    """A pipeline as GitLab's REST API shows it."""
    return {"id": pipeline["id"], "iid": pipeline["id"], "project_id": project["id"], "status":
            rolled_up([j["state"] for j in jobs]), "source": pipeline["source"], "ref": pipeline["ref"],
            "sha": pipeline["sha"], "created_at": iso_time(pipeline["created"]),
            "web_url": f"{server_url}/{project['path']}/-/pipelines/{pipeline['id']}"}


def job_object(job: dict, project: dict, pipeline_status: str, server_url: str) -> dict:
    """A job as GitLab's REST API shows it (GET /projects/:id/jobs/:job_id)."""
    started, finished = job["started"], job["finished"]
    runner = job["runner"]
    return {
        "id": job["id"], "name": job["name"], "status": job["state"], "stage": job["stage"], "ref": job["ref"],
        "tag": False, "tag_list": job["tags"], "allow_failure": False,
        "created_at": iso_time(job["created"]), "started_at": iso_time(started), "finished_at": iso_time(finished),
        "duration": round(finished - started, 3) if started and finished else None,
        "queued_duration": round((started or time.time()) - job["created"], 3),
        "failure_reason": job["failure_reason"] if job["state"] == "failed" else None,
        "commit": {"id": job["sha"], "short_id": job["sha"][:8]},
        "pipeline": {"id": job["pipeline_id"], "project_id": project["id"], "ref": job["ref"], "sha": job["sha"],
                     "status": pipeline_status},
        "runner": {"id": runner["id"], "description": runner["description"]} if runner else None,
        "web_url": f"{server_url}/{project['path']}/-/jobs/{job['id']}",
    }
