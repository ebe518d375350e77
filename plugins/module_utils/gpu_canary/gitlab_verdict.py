# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The verdict on one GitLab job of the canary's pipeline: did it prove its pool's lane?

gpu_canary/verdict.py calls this for every GitLab pool of a lane in GitLab mode,
with what the module canary_gitlab_pipeline recorded (the job's status, the
runner that took it, the pod and node it ran on, its trace). The order of
trust is the canary Job's: a simulated node ends the judgement at
``scheduled-only`` whatever the job did there (its failure or timeout is the
simulation's, not the lane's); ``proved`` (a GPU lane) or ``passed`` (a CPU
lane, which asks for no device) needs every evidence pattern of the lane's
check matched by a line of the trace of a job that succeeded, and, as for
the canary Job, the trace and the job pod's node showing exactly what the
lane promises (exact_proof.py). A DRA pool's job also says what its pod's
claims were allocated (``claims``, as the module read them while it ran),
which the exact proof checks too.
"""

from __future__ import annotations

import re

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.checks import NEGATIVE_CONTROL, NO_GPU, evidence_patterns
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.exact_proof import (
    allocation_proof,
    exact_proof_problem,
    what_was_seen,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.ci_snippets import (
    NEGATIVE_CONTROL_JOB,
    gitlab_job_name,
    negative_control_pool,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import DRA

# How much of a failed job's trace a result quotes.
OUTPUT_LINES = 20


def judge_gitlab_job(lane, pool, gitlab, context):
    """One pool's GitLab job result: where and how it ran, ``result``, ``reason`` and ``evidence``.

    ``gitlab`` is the module's result (``pipeline``, ``jobs`` by name; ``failed``
    and ``msg`` when a step failed after it changed something in GitLab);
    ``context`` holds ``checks``, ``context_patterns``, ``simulated`` and
    ``simulated_gpus`` (node names), ``node_labels`` (by node name),
    ``job_timeout`` and ``gitlab_job_timeout`` (seconds).
    """
    name = gitlab_job_name(pool)
    pipeline = gitlab.get("pipeline") or {}
    job = (gitlab.get("jobs") or {}).get(name) or {}
    pod = job.get("pod") or {}
    entry = dict(_where_it_ran(name, job, context), **{
        "pool": pool["name"],
        "tags": list(pool.get("tags") or []),
        "pipeline_id": pipeline.get("id"),
        "pipeline_url": pipeline.get("web_url"),
        "pod_namespace": pod.get("namespace"),
        "started_at": job.get("started"),
        "finished_at": job.get("finished"),
    })
    if lane.get("gpu_allocation") == DRA:
        # What the cluster allocated to the job pod's claim; a device-plugin job's entry has no such key.
        entry["claims"] = [dict(claim) for claim in pod.get("claims") or []]
    patterns = evidence_patterns(context["checks"][lane["check"]], lane)
    lines = [str(line) for line in job.get("trace") or []]
    entry["result"], entry["reason"] = _verdict(lane, entry, job, gitlab, lines, context)
    quoted = patterns + context["context_patterns"]
    # A job that ran where containers run is quoted: its evidence when it proved, else its own last words.
    ran = job.get("id") and job.get("gave_up") != "pending" and not entry["node_simulated"]
    entry["evidence"] = ([line for line in lines if any(re.search(p, line) for p in quoted)]
                         if entry["result"] in ("proved", "passed") else _output(lines, quoted) if ran else [])
    return entry


def _verdict(lane, entry, job, gitlab, lines, context):
    """(result, reason), checked in the order of trust."""
    pipeline = gitlab.get("pipeline") or {}
    if gitlab.get("failed"):
        return "failed", "the canary's GitLab step failed: %s" % gitlab.get("msg")
    if not pipeline.get("id"):
        return "failed", "no canary pipeline ran"
    if not job.get("id"):
        return "failed", "pipeline %s has no job %s" % (pipeline["id"], entry["job_name"])
    ended = _ended(job, context)
    if job.get("gave_up") == "pending":
        return "failed", "no runner with tags [%s] took job %s within %ds" % (
            ", ".join(entry["tags"]), job["id"], context["gitlab_job_timeout"])
    if entry["node_simulated"]:
        return "scheduled-only", ("simulated node (kwok): GitLab Runner's job pod %s was scheduled on %s, where "
                                  "containers do not run; the job %s there, which is the simulation's, not the lane's"
                                  % (entry["pod"], entry["node"], ended))
    if job.get("gave_up") == "running":
        return "failed", "job %s did not finish within %ds of starting" % (job["id"], context["job_timeout"])
    if job.get("status") != "success":
        return "failed", "job %s %s" % (job["id"], ended)
    if lane["gpu_access"] != NO_GPU and entry["node"] in context["simulated_gpus"]:
        return "scheduled-only", ("real node %s with simulated GPUs: job %s succeeded; no GPU there to prove"
                                  % (entry["node"], job["id"]))
    check = context["checks"][lane["check"]]
    missing = [p for p in evidence_patterns(check, lane) if not any(re.search(p, line) for line in lines)]
    claims = entry.get("claims")  # None but on a DRA lane
    if missing:
        seen = what_was_seen(lane, lines, entry["node"], context["node_labels"], claims)
        return "failed", "job %s succeeded but its trace has no evidence (no line matches %s)%s" % (
            job["id"], ", ".join(missing), "; " + seen if seen else "")
    problem = exact_proof_problem(lane, lines, entry["node"], context["node_labels"], claims)
    if problem:
        return "failed", "job %s succeeded but is %s" % (job["id"], problem)
    return "passed" if lane["gpu_access"] == NO_GPU else "proved", "%s%s (GitLab job %s)" % (
        check["proof"], allocation_proof(lane, claims), job["id"])


def judge_negative_control(lanes, gitlab, context):
    """The negative control's job (ci_snippets.NEGATIVE_CONTROL_JOB): where it ran, ``holds``, ``reason``, ``evidence``.

    It holds only when its job succeeded on a real node and its trace says
    it saw no GPU device node and no nvidia-smi; a simulated node proves
    nothing either way.
    """
    pool = negative_control_pool(lanes)
    pipeline = gitlab.get("pipeline") or {}
    job = (gitlab.get("jobs") or {}).get(NEGATIVE_CONTROL_JOB) or {}
    entry = dict(_where_it_ran(NEGATIVE_CONTROL_JOB, job, context),
                 pool=pool["name"] if pool else None, tags=list((pool or {}).get("tags") or []))
    lines = [str(line) for line in job.get("trace") or []]
    quoted = NEGATIVE_CONTROL["evidence"] + [NEGATIVE_CONTROL["broken"]]
    entry["evidence"] = [line for line in lines if any(re.search(p, line) for p in quoted)]
    entry["result"], entry["reason"] = _negative_verdict(entry, job, pipeline, lines, context)
    entry["holds"] = entry["result"] == "holds"
    return entry


def _negative_verdict(entry, job, pipeline, lines, context):
    if not entry["pool"]:
        return "missing", ("no GitLab pool without a GPU request to run it on: a GPU lane is proved only when a job "
                           "without the request, in the same image, saw no GPU; add such a pool (gitlab_runner_pools)")
    if not pipeline.get("id") or not job.get("id"):
        return "missing", "pipeline %s has no job %s" % (pipeline.get("id"), NEGATIVE_CONTROL_JOB)
    if job.get("gave_up") == "pending":
        return "failed", "no runner with tags [%s] took job %s within %ds" % (
            ", ".join(entry["tags"]), job["id"], context["gitlab_job_timeout"])
    if entry["node_simulated"]:
        return "scheduled-only", "job %s ran on simulated node %s, where containers do not run" % (
            job["id"], entry["node"])
    broken = [line for line in lines if re.search(NEGATIVE_CONTROL["broken"], line)]
    if broken:
        return "broken", "job %s without a GPU request saw a GPU: %s" % (job["id"], broken[0])
    if job.get("status") != "success":
        return "failed", "job %s %s" % (job["id"], _ended(job, context))
    missing = [p for p in NEGATIVE_CONTROL["evidence"] if not any(re.search(p, line) for line in lines)]
    if missing:
        return "failed", "job %s succeeded but its trace lacks %s" % (job["id"], ", ".join(missing))
    return "holds", "job %s without a GPU request (pool %s) saw no GPU device node and no nvidia-smi on %s" % (
        job["id"], entry["pool"], entry["node"])


def negative_control_part(control, lane_node):
    """The negative control as a part of a GPU lane's verdict (for ``combine``): it never lowers a proof that holds."""
    if control["holds"]:
        where = "the GPU job's node too" if control["node"] == lane_node else "not the GPU job's node %s" % lane_node
        return "proved", "%s (%s)" % (control["reason"], where)
    result = "scheduled-only" if control["result"] == "scheduled-only" else "failed"
    return result, "negative control: " + control["reason"]


def _where_it_ran(name, job, context):
    """What a GitLab job of the canary's pipeline is known by: its ids, runner, pod, the pod's devices and node."""
    pod = job.get("pod") or {}
    node = pod.get("node") or None
    return {"job_id": job.get("id"), "job_name": name, "job_url": job.get("web_url"), "status": job.get("status"),
            "runner": job.get("runner"), "pod": pod.get("name"), "runtime_class": pod.get("runtime_class"),
            "device_limits": pod.get("device_limits") or {}, "node": node,
            "node_simulated": bool(node) and node in context["simulated"]}


def _ended(job, context):
    status = job.get("status") or "unknown"
    if job.get("gave_up") == "running":
        return "was still running after %ds" % context["job_timeout"]
    if status == "success":
        return "succeeded"
    reason = job.get("failure_reason")
    return "ended %s%s" % (status, " (%s)" % reason if reason else "")


def _output(lines, quoted):
    """A job's own words: its last lines, and earlier lines that match a pattern."""
    tail_start = max(len(lines) - OUTPUT_LINES, 0)
    return [line for index, line in enumerate(lines)
            if index >= tail_start or any(re.search(p, line) for p in quoted)]


def combine(parts):
    """A lane's result and reason from its parts (the canary Job's and each GitLab job's): the worst one decides.

    ``parts`` are ``(label, result, reason)``; the reason quotes every part
    with the lane's result, each after its label when there are several.
    """
    order = ("failed", "scheduled-only", "passed", "proved")
    worst = min((order.index(result) for _label, result, _reason in parts), default=0)
    result = order[worst]
    deciding = [(label, reason) for label, part_result, reason in parts if part_result == result]
    if len(parts) == 1:
        return result, deciding[0][1]
    return result, "; ".join("%s: %s" % pair for pair in deciding)
