# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The job as the GitLab STAND-IN hands it to a runner (POST /api/v4/jobs/request, 201). Not GitLab.

The fields are those GitLab Runner 19.x decodes from a job response
(common/spec's Job: id, token, allow_git_fetch, job_info, git_info,
runner_info, variables, steps, image, services, artifacts, cache,
credentials, dependencies, features). There is no `inputs` key: GitLab sends
none for a job without inputs. The runner clones `git_info.repo_url`, which
carries the job token as GitLab's does (user gitlab-ci-token), from the
address the runner itself used to reach the stand-in; it adds CI_JOB_TOKEN
to the variables itself.
"""
from __future__ import annotations

from .gitlab_repos import ZERO_SHA
from .gitlab_state import JOB_TIMEOUT_S, JOB_TOKEN_PREFIX

# GitLab's default shallow clone depth for new projects.
GIT_DEPTH = 20


def predefined_variables(job: dict, server_url: str) -> dict[str, str]:
    """The predefined CI/CD variables a job script can rely on (a subset of GitLab's)."""
    project, ref, sha = job["project"], job["ref"], job["sha"]
    host_port = server_url.split("://", 1)[1]
    host, _colon, port = host_port.partition(":")
    return {
        "CI": "true", "GITLAB_CI": "true",
        "CI_SERVER_URL": server_url, "CI_SERVER_HOST": host, "CI_SERVER_PORT": port or "80",
        "CI_SERVER_PROTOCOL": server_url.split("://", 1)[0],
        "CI_PROJECT_ID": str(project["id"]), "CI_PROJECT_PATH": project["path"],
        "CI_PROJECT_NAME": project["path"].rsplit("/", 1)[-1],
        "CI_PROJECT_NAMESPACE": project["path"].rsplit("/", 1)[0],
        "CI_PROJECT_URL": f"{server_url}/{project['path']}",
        "CI_COMMIT_SHA": sha, "CI_COMMIT_SHORT_SHA": sha[:8], "CI_COMMIT_BEFORE_SHA": ZERO_SHA,
        "CI_COMMIT_REF_NAME": ref, "CI_COMMIT_BRANCH": ref, "CI_DEFAULT_BRANCH": project.get("default_branch", "main"),
        "CI_PIPELINE_ID": str(job.get("pipeline_id") or ""),
        "CI_JOB_ID": str(job["id"]), "CI_JOB_NAME": job["name"], "CI_JOB_STAGE": job["stage"],
        "CI_JOB_URL": f"{server_url}/{project['path']}/-/jobs/{job['id']}",
        # GitLab's default; a job's own GIT_STRATEGY (below) wins.
        "GIT_STRATEGY": "fetch",
    }


def job_payload(job: dict, job_token: str, server_url: str) -> dict:
    """The runner's view of a job; `server_url` is http://<the Host the runner asked>."""
    project = job["project"]
    # One entry per key: the job's own variables override the predefined ones.
    variables = {**predefined_variables(job, server_url), **{k: str(v) for k, v in job["variables"].items()}}
    host_port = server_url.split("://", 1)[1]
    timeout = int(job.get("timeout") or JOB_TIMEOUT_S)
    return {
        "id": job["id"],
        "token": job_token,
        "allow_git_fetch": True,
        "job_info": {"name": job["name"], "stage": job["stage"], "pipeline_id": job.get("pipeline_id") or 0,
                     "project_id": project["id"], "project_name": project["path"].rsplit("/", 1)[-1],
                     "project_full_path": project["path"]},
        "git_info": {"repo_url": f"http://gitlab-ci-token:{job_token}@{host_port}/{project['path']}.git",
                     "repo_object_format": "sha1", "ref": job["ref"], "sha": job["sha"], "before_sha": ZERO_SHA,
                     "ref_type": "branch", "refspecs": [f"+refs/heads/{job['ref']}:refs/remotes/origin/{job['ref']}"],
                     "depth": GIT_DEPTH, "protected": False},
        # The job's timeout: GitLab sends the project's (or the runner's
        # maximum_timeout); the executor makes it the job pod's
        # activeDeadlineSeconds (plus one second).
        "runner_info": {"timeout": timeout},
        "variables": [{"key": k, "value": v, "public": True, "file": False, "masked": False}
                      for k, v in variables.items()],
        "steps": [{"name": "script", "script": list(job["script"]), "timeout": timeout,
                   "when": "on_success", "allow_failure": False}],
        "image": {"name": job["image"] or ""},
        "services": [], "artifacts": [], "cache": [], "credentials": [], "dependencies": [],
        "features": {"trace_sections": True, "token_mask_prefixes": [JOB_TOKEN_PREFIX]},
    }
