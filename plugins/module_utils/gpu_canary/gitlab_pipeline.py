# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The canary's pipeline in GitLab: commit .gitlab-ci.yml when it changed, run it, wait with progress, read the traces.

What the module gpuci.runners.canary_gitlab_pipeline (and its action plugin,
in the controller's process) run. It talks to GitLab through python-gitlab
and lists GitLab Runner's job pods through kubernetes.core's client while it
waits (the runner deletes a job pod when its job ends, so the node a job ran
on is only seen during the wait), and, for a DRA pool's job pod, the
ResourceClaims it names (whose allocation, too, lives only while the pod
runs: gpu_canary/claims.py). Every decision is module_utils/gpu_canary/gitlab_jobs.py's.

Nothing is changed before GitLab has answered that the project exists and
the token's user may push there; in check mode nothing is changed at all.
The token goes to python-gitlab and nowhere else: no result, message or
progress line holds it (the caller also masks it, as no_log does).

GitLab's transient errors (a 502 from its proxy, a 503 while it restarts)
are retried by python-gitlab itself (``retry_transient_errors``, at most
MAX_RETRIES times a request), except for the two requests that change
GitLab (the commit, the pipeline). A step that fails after the commit
returns the commit with the failure (``failure``), so it is never lost.
"""

from __future__ import annotations

import time

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import RESOURCE_API_VERSION
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.gitlab_jobs import (
    CI_FILE,
    COMMIT_MESSAGE,
    FINISHED,
    PROJECT_ID_LABEL,
    access_level,
    access_problem,
    give_up,
    http_problem,
    latest_pod,
    pod_of_job,
    progress_line,
    project_ident,
    protected_problem,
    trace_lines,
    unreachable_problem,
)

try:
    import gitlab
    import requests
    HAS_GITLAB = True
except ImportError:  # pragma: no cover - the module says what is missing
    HAS_GITLAB = False

# A progress line is shown when the jobs' states change, and at least this often (seconds) while they do not.
PROGRESS_EVERY = 30
# How often python-gitlab tries a request again after a transient error (500, 502, 503, 504, 52x, a refused
# or reset connection) before the canary reports it: its backoff waits 0.1 s, doubling (Retry-After when GitLab
# sends one), so about 6 s in all, enough for a proxy's blip or a restarting pod, and an unreachable URL is still
# named within seconds. python-gitlab's own default (10) waits up to 102 s.
MAX_RETRIES = 6


class CanaryError(Exception):
    """A failure of the canary's pipeline whose message names the variable to fix.

    ``made`` is the run's result so far when it had changed GitLab (committed) before it failed.
    """

    def __init__(self, message, made=None):
        super().__init__(message)
        self.made = made


if HAS_GITLAB:
    class _Gitlab(gitlab.Gitlab):
        """python-gitlab's client with its retries of transient errors on, bounded to MAX_RETRIES per request.

        python-gitlab takes ``max_retries`` per request only; every request of
        the canary passes through here, pagination included.
        """

        def http_request(self, *args, **kwargs):
            kwargs.setdefault("max_retries", MAX_RETRIES)
            return super().http_request(*args, **kwargs)


def gitlab_client(url, token, session=None):
    """A python-gitlab client; the token lives only in it (its session's PRIVATE-TOKEN header).

    It retries GitLab's transient errors (python-gitlab's ``retry_transient_errors``),
    except where a request changes GitLab (``_once``). ``session`` (a
    requests.Session) is for tests, which answer with a fake transport.
    """
    extra = {"session": session} if session is not None else {}
    return _Gitlab(url, private_token=token, timeout=30, retry_transient_errors=True, **extra)


def pod_lister(kubeconfig=None, context=None):
    """Functions listing the pods of a GitLab project's jobs (by GitLab Runner's label, all namespaces) and their claims.

    Returns ``(list_pods, list_claims, problem)``: ``list_pods(project_id)``
    gives pod dicts ([] when the cluster cannot be read);
    ``list_claims(pods)`` the ResourceClaims those pods' statuses name
    (``status.resourceClaimStatuses``: a DRA pool's job pods; [] for pods
    without, so a cluster without DRA is never asked); ``problem`` says why
    the pods cannot be read ("" when they can).
    """
    try:
        from ansible_collections.kubernetes.core.plugins.module_utils.k8s.client import get_api_client  # pylint: disable=import-outside-toplevel
        client = get_api_client(kubeconfig=kubeconfig, context=context)
        pods = client.resources.get(api_version="v1", kind="Pod")
    except Exception as error:  # pylint: disable=broad-exception-caught
        return (lambda project_id: []), _no_claims, "the cluster's pods cannot be read: %s" % " ".join(
            str(error).split())[:300]

    def list_pods(project_id):
        try:
            return pods.get(label_selector="%s=%s" % (PROJECT_ID_LABEL, project_id)).to_dict().get("items") or []
        except Exception:  # pylint: disable=broad-exception-caught
            return []  # one failed read leaves the pod unseen this round; the trace may still name it

    def list_claims(listed):
        named = claim_names(listed)
        if not named:
            return []
        try:
            claims = client.resources.get(api_version=RESOURCE_API_VERSION, kind="ResourceClaim")
        except Exception:  # pylint: disable=broad-exception-caught
            return []  # no resource.k8s.io/v1: no claim to read
        found = []
        for namespace, name in named:
            try:
                found.append(claims.get(name=name, namespace=namespace).to_dict())
            except Exception:  # pylint: disable=broad-exception-caught
                pass  # gone already (the job ended) or unreadable this round; a later poll may see it
        return found
    return list_pods, list_claims, ""


def claim_names(pods):
    """``[(namespace, name)]`` of the ResourceClaims the pods' statuses name, sorted, each once."""
    return sorted(set(((pod.get("metadata") or {}).get("namespace"), status["resourceClaimName"])
                      for pod in pods or [] for status in (pod.get("status") or {}).get("resourceClaimStatuses") or []
                      if status.get("resourceClaimName")))


def run_canary_pipeline(params, client, list_pods, say, check_mode=False, sleep=time.sleep, clock=time.monotonic,
                        list_claims=None):
    """Commit, run and watch the canary pipeline; return the module's result (raises CanaryError).

    ``params``: ``url``, ``project``, ``ref``, ``ci_content`` (the file),
    ``pending_timeout``, ``run_timeout``, ``poll_interval`` (seconds). ``client`` is a python-gitlab
    client, ``list_pods(project_id)`` lists job pods, ``list_claims(pods)``
    the claims they name (none when not given), ``say(line)`` shows
    progress.
    """
    ref = params["ref"]
    project_name = str(params["project"])
    project = _call(lambda: client.projects.get(project_ident(params["project"])), "reading the project", params)
    attributes = project.attributes
    problem = access_problem(attributes.get("permissions"), project_name, ref) or protected_problem(
        _protected_branch(project, ref), access_level(attributes.get("permissions")), project_name, ref)
    if problem:
        raise CanaryError(problem)
    result = {"changed": False, "project": {"id": attributes["id"], "path": attributes.get("path_with_namespace"),
                                            "web_url": attributes.get("web_url")},
              "ref": ref, "file": CI_FILE, "commit": None, "pipeline": None, "jobs": {}}
    current = _current_file(project, ref, params)
    wanted = params["ci_content"]
    if current != wanted:
        result["changed"] = True
        result["diff"] = {"before": current or "", "after": wanted, "before_header": "%s@%s (%s)" % (
            project_name, ref, CI_FILE), "after_header": "generated by gpu_canary"}
    if check_mode:
        say("check mode: %s at %s@%s %s; no pipeline is created" % (
            CI_FILE, project_name, ref, "would be committed" if result["changed"] else "is unchanged"))
        result["summary"] = pipeline_summary(result, check_mode)
        return result
    if result["changed"]:
        action = "create" if current is None else "update"
        commit = _call(lambda: project.commits.create({
            "branch": ref, "commit_message": COMMIT_MESSAGE,
            "actions": [{"action": action, "file_path": CI_FILE, "content": wanted}]}, **_ONCE),
            "committing %s" % CI_FILE, params)
        result["commit"] = {"id": commit.attributes.get("id"), "web_url": commit.attributes.get("web_url")}
        say("committed %s to %s@%s: %s" % (CI_FILE, project_name, ref, result["commit"]["id"]))
    # Whatever fails from here on, the module's failure reports the commit (and the pipeline) made before.
    try:
        return _run_pipeline(project, result, params, (list_pods, list_claims or _no_claims), say, sleep, clock)
    except CanaryError as error:
        raise CanaryError(str(error), result) from error
    except Exception as error:  # pylint: disable=broad-exception-caught
        raise CanaryError(unreachable_problem(params["url"], error), result) from error


def _run_pipeline(project, result, params, listers, say, sleep, clock):
    """Create the pipeline, watch its jobs, read their traces; fills in ``result`` as it goes."""
    ref, project_name = params["ref"], str(params["project"])
    pipeline = _call(lambda: project.pipelines.create({"ref": ref}, **_ONCE), "creating a pipeline", params)
    result["pipeline"] = {"id": pipeline.attributes["id"], "web_url": pipeline.attributes.get("web_url"),
                          "status": pipeline.attributes.get("status")}
    say("pipeline %s on %s@%s: %s" % (pipeline.attributes["id"], project_name, ref, pipeline.attributes.get("web_url")))
    jobs = _watch(project, pipeline, params, listers, say, sleep, clock)
    result["pipeline"]["status"] = _call(lambda: project.pipelines.get(pipeline.attributes["id"]),
                                         "reading the pipeline", params).attributes.get("status")
    for job in jobs.values():
        if job["gave_up"]:
            job["canceled"] = _cancel(project, job["id"])
        if job["started_at"] is not None:
            job["trace"] = _trace(project, job["id"])
        if not job["pod"]:
            job["pod"] = pod_of_job([], job["id"], job["trace"])
        for key in ("queued_at", "started_at"):
            job.pop(key)
    result["jobs"] = jobs
    result["summary"] = pipeline_summary(result)
    return result


def pipeline_summary(result, check_mode=False):
    """One line on what the run did, for the role to show (the module's own output is hidden: it holds the token)."""
    where = (result["file"], result["project"]["path"], result["ref"])
    if check_mode:
        if result["changed"]:
            return "Check mode: %s would be committed to %s@%s; no pipeline is created." % where
        return "Check mode: %s is unchanged in %s@%s; no pipeline is created." % where
    pipeline = result["pipeline"]
    commit = "committed %s" % result["commit"]["id"] if result["commit"] else "the file was unchanged"
    return "Pipeline %s (%s): %s; %s." % (pipeline["id"], pipeline["web_url"], pipeline["status"], commit)


# A request that changes GitLab is made once: a proxy's 502 does not say whether GitLab committed or started the
# pipeline, and a retry could commit twice or start a second pipeline that nobody watches. The canary's next run
# finds the file committed (no second commit) and starts its pipeline.
_ONCE = {"retry_transient_errors": False}


def failure(message, made=None):
    """The module's failure result: ``msg``, and what it had made in GitLab before (``made``: the run's result so far).

    A commit (or a pipeline) made before a later step failed is reported
    with the failure (``commit``, ``pipeline``, ``project``, and the
    ``summary`` and ``msg`` naming it), so the role's report and the user see
    what changed in GitLab; without one the failure is only ``msg``.
    """
    if not made or not (made.get("commit") or made.get("pipeline")):
        return {"failed": True, "changed": False, "msg": message}
    commit, pipeline = made.get("commit"), made.get("pipeline")
    committed = "committed %s to %s@%s: %s (%s)" % (
        made["file"], made["project"]["path"], made["ref"], commit["id"], commit["web_url"]) if commit else ""
    created = "created pipeline %s (%s)" % (pipeline["id"], pipeline["web_url"]) if pipeline else ""
    done = " and ".join(part for part in (committed, created) if part)
    message = "%s (before that the canary %s)" % (message, done)
    kept = dict((key, value) for key, value in made.items() if key != "diff")
    return dict(kept, failed=True, changed=bool(commit), msg=message, summary="The canary's GitLab step failed: %s." % message)


def _call(action, step, params):
    """Run one GitLab call; its failure becomes a CanaryError naming the variable to fix."""
    try:
        return action()
    except gitlab.exceptions.GitlabError as error:
        raise CanaryError(http_problem(step, error.response_code, params["project"], params["ref"], params["url"],
                                       getattr(error, "error_message", "")))
    except requests.exceptions.RequestException as error:
        raise CanaryError(unreachable_problem(params["url"], error))


def _protected_branch(project, ref):
    """The ref's protected-branch settings, or None when it is not protected or they cannot be read.

    GitLab answers 404 for a branch that is not protected; a user who may
    not read them (403) is left to the commit, which GitLab refuses then.
    """
    try:
        return project.protectedbranches.get(ref).attributes
    except (gitlab.exceptions.GitlabError, requests.exceptions.RequestException):
        return None


def _current_file(project, ref, params):
    """The file's text at the ref, or None when it does not exist (GitLab's 404)."""
    try:
        return project.files.raw(file_path=CI_FILE, ref=ref).decode("utf-8", "replace")
    except gitlab.exceptions.GitlabError as error:
        if error.response_code == 404:
            return None
        raise CanaryError(http_problem("reading %s" % CI_FILE, error.response_code, params["project"], ref,
                                       params["url"], getattr(error, "error_message", "")))
    except requests.exceptions.RequestException as error:
        raise CanaryError(unreachable_problem(params["url"], error))


def _watch(project, pipeline, params, listers, say, sleep, clock):
    """Poll the pipeline's jobs until each ended or the canary gave up on it; the jobs by name.

    ``listers``: ``(list_pods, list_claims)``, run_canary_pipeline's.
    """
    list_pods, list_claims = listers
    queued_at = clock()
    jobs = {}
    last_line, last_said = None, 0.0
    while True:
        now = clock()
        listed = _call(lambda: pipeline.jobs.list(get_all=True), "listing the pipeline's jobs", params)
        pods = list_pods(project.attributes["id"])
        claims = list_claims(pods)
        for listed_job in listed:
            attributes = listed_job.attributes
            job = jobs.setdefault(attributes["name"], {
                "id": attributes["id"], "name": attributes["name"], "queued_at": queued_at, "started_at": None,
                "gave_up": "", "canceled": False, "pod": None, "trace": []})
            if job["gave_up"]:
                continue
            job.update(status=attributes.get("status"), tags=list(attributes.get("tag_list") or []),
                       web_url=attributes.get("web_url"), failure_reason=attributes.get("failure_reason"),
                       runner=_runner(attributes.get("runner")), started=attributes.get("started_at"),
                       finished=attributes.get("finished_at"))
            if job["started_at"] is None and (job["status"] == "running" or job["status"] in FINISHED
                                              and attributes.get("started_at")):
                job["started_at"] = now
            # The pod is kept once seen: the runner deletes it when the job ends (and its claim's allocation with it).
            job["pod"] = latest_pod(pod_of_job(pods, job["id"], claims=claims), job["pod"])
            job["gave_up"] = give_up(job, now, params["pending_timeout"], params["run_timeout"])
        # Said when a job changed state (the durations alone change every poll), and every PROGRESS_EVERY seconds.
        shape = sorted((job["name"], job["status"], job["gave_up"], job["started_at"] is None) for job in jobs.values())
        if shape != last_line or now - last_said >= PROGRESS_EVERY:
            say("%ds: %s" % (now - queued_at, progress_line(list(jobs.values()), now)))
            last_line, last_said = shape, now
        if jobs and all(job["status"] in FINISHED or job["gave_up"] for job in jobs.values()):
            return jobs
        sleep(params["poll_interval"])


def _runner(runner):
    return {"id": runner.get("id"), "description": runner.get("description") or ""} if runner else None


def _cancel(project, job_id):
    """Cancel a job the canary gave up on, so it does not run later on a runner nobody watches; True if canceled."""
    try:
        project.jobs.get(job_id, lazy=True).cancel()
        return True
    except (gitlab.exceptions.GitlabError, requests.exceptions.RequestException):
        return False


def _trace(project, job_id):
    try:
        raw = project.jobs.get(job_id, lazy=True).trace()
    except (gitlab.exceptions.GitlabError, requests.exceptions.RequestException):
        return []
    return trace_lines(raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw))


# The module's options (plugins/modules/canary_gitlab_pipeline.py documents them); the action plugin validates with it too.
ARGUMENT_SPEC = {
    "url": {"type": "str", "required": True},
    "api_token": {"type": "str", "required": True, "no_log": True},
    "project": {"type": "str", "required": True},
    "ref": {"type": "str", "default": "main"},
    "ci_content": {"type": "str", "required": True},
    "pending_timeout": {"type": "int", "default": 300},
    "run_timeout": {"type": "int", "default": 600},
    "poll_interval": {"type": "int", "default": 5},
    "read_pods": {"type": "bool", "default": True},
    "kubeconfig": {"type": "path"},
    "context": {"type": "str"},
}


def _no_pods(_project_id):
    """The pod lister in check mode or without cluster reads: nothing to list."""
    return []


def _no_claims(_pods):
    """The claim lister without cluster reads: nothing to read."""
    return []


def run_module(params, say, check_mode, client=None, list_pods=None, sleep=time.sleep, clock=time.monotonic,
               list_claims=None):
    """The module's result for validated ``params``: ``failed`` and ``msg`` on a CanaryError.

    Whatever happens, the token is taken out of every string of the result
    and of every progress line before they leave (python-gitlab's errors
    quote GitLab's answers, which could echo a header).
    """
    token = params["api_token"]

    def scrub(value):
        if isinstance(value, str):
            return value.replace(token, "********") if token else value
        if isinstance(value, dict):
            return dict((key, scrub(item)) for key, item in value.items())
        if isinstance(value, list):
            return [scrub(item) for item in value]
        return value

    pods_note = ""
    if list_pods is None:
        if params.get("read_pods", True) and not check_mode:
            list_pods, list_claims, pods_note = pod_lister(params.get("kubeconfig"), params.get("context"))
        else:
            list_pods = _no_pods
    try:
        client = client or gitlab_client(params["url"], token)
        result = run_canary_pipeline(params, client, list_pods, lambda line: say(scrub(line)), check_mode, sleep, clock,
                                     list_claims)
    except CanaryError as error:
        return scrub(dict(failure(str(error), error.made), pods_note=pods_note))
    except Exception as error:  # pylint: disable=broad-exception-caught
        # An answer the code does not expect (a proxy's HTML page, a malformed URL) still names the URL.
        return {"failed": True, "changed": False, "msg": scrub(unreachable_problem(params["url"], error))}
    result["pods_note"] = pods_note
    return scrub(result)
