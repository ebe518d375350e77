# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The canary's verdict: what the cluster answered, judged per lane, and the report's node table.

The gpu_canary role gathers and writes; this module decides. It takes the
lanes (as ``canary_lanes`` builds them, with ``node_check``) and the cluster's
answers the role recorded: Job and Pod objects (``kubernetes.core.k8s_info``),
the results of reading each pod's log (``kubernetes.core.k8s_log`` in a loop
with ``loop_var: pod``) and the Node objects. It returns the per-lane results
in the shape of the proof report (``files/proof-report.schema.json``), the
summary, and one row per node that a lane's pod landed on or a lane's node
check considered, saying whether the node is real or simulated and how that
is known.

The order of the checks is the order of trust: a simulated node ends the
judgement at ``scheduled-only`` whatever its pod says; so does a real node
whose GPUs are simulated, once its container ran (its output is quoted); and
``proved`` needs every evidence pattern of the lane's check matched by a line
of the log of a container on a real node, and that log and node showing
exactly what the lane promises: its class's GPU, as many as its ``gpus`` (one
MIG device of its profile), on a node of its class (exact_proof.py); on a
DRA lane also the devices allocated to its pod's claim, from that node's
pool, as the ResourceClaims read while the pod ran say (``claims``).
"""

from __future__ import annotations

import datetime
import re
from dataclasses import dataclass
from typing import Optional

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.ci_snippets import gitlab_job_name
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.checks import (
    CHECKS,
    CONTAINER,
    CONTEXT_PATTERN,
    MIG_PROFILE,
    NO_GPU,
    evidence_patterns,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.claims import pod_claims
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.exact_proof import (
    allocation_proof,
    exact_proof_problem,
    what_was_seen,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.lanes import (
    KWOK_ANNOTATION,
    SIMULATED_GPU_LABEL,
    SIMULATED_LABEL,
    simulation_markers,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.gitlab_verdict import (
    combine,
    judge_gitlab_job,
    judge_negative_control,
    negative_control_part,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.progress import job_finish
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import DRA
from ansible_collections.gpuci.runners.plugins.module_utils.k8s.objects import metadata, object_name
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    check_int,
    check_str_list,
    child,
    item,
    object_list,
    plain,
    reject_unknown_keys,
    require_mapping,
    type_name,
)

INPUT_KEYS = frozenset((
    "lanes", "jobs", "pods", "logs", "events", "nodes", "claims", "checks", "context_pattern", "job_timeout",
    "checked_at", "now", "gitlab", "gitlab_job_timeout",
))
RESULTS = ("proved", "scheduled-only", "failed")
# In GitLab mode a CPU pool's lane can pass (module_utils/gpu_canary/gitlab_verdict.py).
GITLAB_RESULTS = ("proved", "passed", "scheduled-only", "failed")
# How much of a failed container's own output a result quotes.
OUTPUT_LINES = 20
SIMULATED_REASON = "simulated node (kwok): containers do not run"
SIMULATED_GPU_REASON = ("real node with simulated GPUs (label %s=true): the container ran and %s; "
                        "no GPU there to prove" % (SIMULATED_GPU_LABEL, "%s"))
_TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def canary_verdict(spec, path="verdict"):
    """Judge every lane; return ``{lanes, nodes, summary, simulated_nodes}``.

    ``spec`` holds ``lanes``, ``jobs``, ``pods``, ``logs``, ``nodes`` (lists
    as the modules return them; all but ``lanes`` may be missing or empty),
    ``checks`` (check name -> ``evidence`` patterns and ``proof`` text) and
    ``context_pattern`` (log lines worth quoting besides the evidence),
    both canary_checks' own unless given, ``job_timeout`` (seconds, for the reason of
    an unfinished Job), ``checked_at`` (when the node checks ran: the start
    of a lane without a Job) and optionally ``now`` (the end of a lane whose
    Job did not finish; default the current UTC time). ``claims`` are the
    ResourceClaims read while the DRA lanes' canary pods ran (their
    allocation is gone once a pod is done).
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    lanes = object_list(spec.get("lanes"), child(path, "lanes"))
    for index, lane in enumerate(lanes):
        _check_lane(lane, item(child(path, "lanes"), index))
    jobs = object_list(spec.get("jobs"), child(path, "jobs"))
    pods = object_list(spec.get("pods"), child(path, "pods"))
    logs = object_list(spec.get("logs"), child(path, "logs"))
    events = object_list(spec.get("events"), child(path, "events"))
    nodes = object_list(spec.get("nodes"), child(path, "nodes"))
    claims = object_list(spec.get("claims"), child(path, "claims"))
    checks = _checks(spec.get("checks", CHECKS), lanes, path)
    context_pattern = _pattern(spec.get("context_pattern", CONTEXT_PATTERN) or "", child(path, "context_pattern"))
    job_timeout = check_int(spec.get("job_timeout"), child(path, "job_timeout"), minimum=1)
    checked_at = _str(spec, "checked_at", path)
    now = _str(spec, "now", path, default="") or datetime.datetime.now(datetime.timezone.utc).strftime(_TIME_FORMAT)

    gitlab = spec.get("gitlab")
    if gitlab is not None:
        require_mapping(gitlab, child(path, "gitlab"))
    table = node_table(lanes, pods, nodes, _gitlab_landed(lanes, gitlab))
    simulated = set(row["name"] for row in table if row["simulated"])
    context = {
        "jobs": jobs, "pods": pods, "logs": logs, "events": events, "claims": claims, "checks": checks,
        "context_patterns": [context_pattern] if context_pattern else [],
        "job_timeout": job_timeout, "checked_at": checked_at, "now": now,
        "simulated": simulated, "simulated_gpus": set(row["name"] for row in table if row["gpus_simulated"]),
        # The labels of each node read: the exact proof's word on whether a pod ran on a node of its lane's class.
        "node_labels": dict((object_name(n), metadata(n).get("labels") or {}) for n in nodes),
    }
    if gitlab is None:
        results = [judge_lane(lane, context) for lane in lanes]
        kinds = RESULTS
    else:
        context["gitlab_job_timeout"] = check_int(spec.get("gitlab_job_timeout"), child(path, "gitlab_job_timeout"),
                                                  minimum=1)
        control = judge_negative_control(lanes, gitlab, context)
        results = [judge_gitlab_lane(lane, gitlab, context, control) for lane in lanes]
        kinds = GITLAB_RESULTS
    verdict = {
        "lanes": results,
        "nodes": table,
        "summary": dict((result, sum(1 for r in results if r["result"] == result)) for result in kinds),
        "simulated_nodes": sorted(simulated),
    }
    if gitlab is not None:
        verdict["negative_control"] = control
    return verdict


def judge_gitlab_lane(lane, gitlab, context, control):
    """A lane in GitLab mode: its GitLab pools by their jobs, its ARC scale sets by the canary Job, worst part wins.

    A lane whose node check failed keeps that failure as a part: the
    runners would place its jobs nowhere either. A GPU lane with GitLab
    pools has the negative control (``control``, judge_negative_control) as
    a part too: it is proved only when the control holds.
    """
    by_job = bool(lane.get("arc_scale_sets"))
    result = judge_lane(lane, context) if by_job else _without_job(lane, context)
    gitlab_jobs = [judge_gitlab_job(lane, pool, gitlab, context) for pool in lane.get("gitlab_pools") or []]
    parts = [("canary Job %s" % lane["job_name"], result["result"], result["reason"])] if by_job else []
    if not by_job and not lane["node_check"]["ok"]:
        parts.append(("node check", "failed", lane["node_check"]["reason"]))
    parts += [("GitLab job %s (pool %s)" % (entry["job_id"] or entry["job_name"], entry["pool"]), entry["result"],
               entry["reason"]) for entry in gitlab_jobs]
    if gitlab_jobs and lane["gpu_access"] != NO_GPU:
        lane_node = next((entry["node"] for entry in gitlab_jobs if entry["node"]), None)
        parts.append(("negative control",) + negative_control_part(control, lane_node))
    result["result"], result["reason"] = combine(parts)
    result["gitlab_jobs"] = gitlab_jobs
    result["proved_by"] = (["canary Job"] if by_job else []) + (["GitLab job"] if gitlab_jobs else [])
    if not by_job and gitlab_jobs:
        # The lane's node, times and evidence are its first GitLab job's.
        first = next((entry for entry in gitlab_jobs if entry["node"]), gitlab_jobs[0])
        if "claims" in first:
            result["claims"] = list(first["claims"])
        result.update(node=first["node"], node_simulated=first["node_simulated"],
                      node_gpus_simulated=bool(first["node"]) and first["node"] in context["simulated_gpus"]
                      and lane["gpu_access"] != "none",
                      evidence=list(first["evidence"]),
                      started_at=str(first["started_at"] or context["checked_at"]),
                      finished_at=str(first["finished_at"] or context["now"]))
    return result


def _lane_fields(lane, context):
    """The report's fields that the lane itself gives, with the times of a lane that ran nothing.

    A DRA lane also says so (``gpu_allocation``), what its pods claim
    (``claim``) and what was allocated (``claims``, none until a job's pod
    was seen); a device-plugin lane has none of these fields.
    """
    fields = {
        "name": lane["name"], "gpu_class": lane["gpu_class"], "gpu_access": lane["gpu_access"],
        "request": lane["request_text"], "resource": lane.get("resource"), "count": lane["count"],
        "mig_profile": lane.get("mig_profile"),
        "serves": {"gitlab_pools": [p["name"] for p in lane.get("gitlab_pools") or []],
                   "arc_scale_sets": [s["name"] for s in lane.get("arc_scale_sets") or []]},
        "started_at": context["checked_at"], "finished_at": context["now"],
    }
    if _is_dra(lane):
        claim = lane.get("claim") or {}
        fields.update(gpu_allocation=DRA, claim={"device_class": claim.get("device_class"),
                                                 "selectors": list(claim.get("selectors") or []),
                                                 "count": claim.get("count")}, claims=[])
    return fields


def _is_dra(lane):
    return lane.get("gpu_allocation") == DRA


def _without_job(lane, context):
    """The report's fields of a lane that gets no canary Job (only GitLab pools, in GitLab mode)."""
    return dict(_lane_fields(lane, context), node=None, node_simulated=False, node_gpus_simulated=False,
                result="failed", reason="", evidence=[], job=None)


def _gitlab_landed(lanes, gitlab):
    """Node name -> the lanes whose GitLab job pods ran there (the node table lists those nodes too)."""
    landed = {}
    for lane in lanes if gitlab else []:
        for pool in lane.get("gitlab_pools") or []:
            job = ((gitlab.get("jobs") or {}).get(gitlab_job_name(pool)) or {})
            node = (job.get("pod") or {}).get("node")
            if node:
                landed.setdefault(str(node), []).append(lane["name"])
    return landed


@dataclass(frozen=True)
class JobRun:
    """What the cluster recorded of one lane's canary Job: the Job, its pod, the pod's node, container and log.

    Each is ``{}`` (``node`` ``""``) when the cluster had none; ``lines`` is
    None when the log was not read, and ``log_problem`` then says why.
    """

    job: dict
    pod: dict
    node: str
    container: dict
    finish: dict
    lines: Optional[list]
    log_problem: str
    # What was allocated to the pod's claims (gpu_canary/claims.py), from the claims read while it ran.
    claims: list

    @classmethod
    def recorded(cls, job_name, context):
        job = _first(j for j in context["jobs"] if metadata(j).get("name") == job_name)
        pod = _first(p for p in context["pods"] if _owned_by(p, job_name))
        log = _first(entry for entry in context["logs"]
                     if pod and metadata(entry.get("pod")).get("name") == metadata(pod).get("name"))
        lines = log.get("log_lines")
        return cls(job, pod, str((pod.get("spec") or {}).get("nodeName") or ""),
                   _first(c for c in _status(pod).get("containerStatuses") or [] if c.get("name") == CONTAINER),
                   job_finish(job), [str(line) for line in lines] if isinstance(lines, list) else None,
                   str(log.get("msg") or "no log"), pod_claims(pod, context["claims"]))


def judge_lane(lane, context):
    """One lane's result, in the report's shape (see ``canary_verdict`` for ``context``)."""
    run = JobRun.recorded(lane["job_name"], context)
    result, reason = _verdict(lane, run, context)
    simulated, gpus_simulated = run.node in context["simulated"], run.node in context["simulated_gpus"]
    quoted = evidence_patterns(context["checks"][lane["check"]], lane) + context["context_patterns"]
    evidence = [line for line in run.lines or [] if any(re.search(p, line) for p in quoted)]
    if (result == "failed" or gpus_simulated) and run.node and not simulated and run.container:
        # A container on a real node ran and failed (or had no GPU to use): quote what it said.
        evidence = _output(run.lines, quoted, run.container)
    times = _status(run.job)
    fields = _lane_fields(lane, context)
    if _is_dra(lane):
        fields["claims"] = list(run.claims)
    return dict(fields, node=run.node or None, node_simulated=simulated,
                node_gpus_simulated=gpus_simulated, result=result, reason=reason, evidence=evidence,
                job=lane["job_name"] if lane["node_check"]["ok"] else None,
                started_at=str(times.get("startTime") or context["checked_at"]),
                finished_at=str(times.get("completionTime") or run.finish.get("lastTransitionTime") or context["now"]))


def _verdict(lane, run, context):
    """(result, reason), checked in the order of trust."""
    if not lane["node_check"]["ok"]:
        return "failed", lane["node_check"]["reason"]
    if not run.pod:
        messages = [c.get("message") for c in _status(run.job).get("conditions") or [] if c.get("message")]
        return "failed", "canary Job made no pod: %s" % (messages[0] if messages else "none was created")
    if not run.node:
        scheduling = _first(c for c in _status(run.pod).get("conditions") or [] if c.get("type") == "PodScheduled")
        return "failed", "no schedulable node: %s" % (scheduling.get("message") or "the pod was not scheduled")
    if run.node in context["simulated"]:
        return "scheduled-only", SIMULATED_REASON
    refusal = _refusal(run)
    if refusal:
        return "failed", refusal
    if not run.finish:
        return "failed", _unfinished(run, context)
    # Simulated GPUs excuse a container that ran, whatever it said; a refused or unfinished pod's failure stands.
    if run.node in context["simulated_gpus"]:
        return "scheduled-only", SIMULATED_GPU_REASON % _ended(run.finish, run.container)
    if run.finish["type"] == "Failed":
        return "failed", "canary checks failed (exit code %s)" % _exit_code(run.container)
    if run.lines is None:
        return "scheduled-only", "log cannot be read: %s" % run.log_problem
    check = context["checks"][lane["check"]]
    claims = run.claims if _is_dra(lane) else None
    missing = [p for p in evidence_patterns(check, lane) if not any(re.search(p, line) for line in run.lines)]
    if missing:
        seen = what_was_seen(lane, run.lines, run.node, context["node_labels"], claims)
        return "failed", "no GPU evidence in the log (no line matches %s)%s" % (", ".join(missing),
                                                                                "; " + seen if seen else "")
    problem = exact_proof_problem(lane, run.lines, run.node, context["node_labels"], claims)
    return ("failed", problem) if problem else ("proved", check["proof"] + allocation_proof(lane, claims))


def _unfinished(run, context):
    """Why a Job did not finish: the container's waiting reason and, the why, what the kubelet said last."""
    waiting = ((run.container.get("state") or {}).get("waiting") or {}).get("reason") or _status(run.pod).get(
        "phase") or "unknown"
    warning = _last_warning(context["events"], run.pod)
    said = "; last warning %s: %s" % (warning["reason"], warning["message"]) if warning else ""
    return "canary Job did not finish within %ds (container: %s%s)" % (context["job_timeout"], waiting, said)


def _refusal(run):
    """Why the node refused the pod, quoting the pod's reason and message; "" when it did not.

    A pod the kubelet refuses at admission (UnexpectedAdmissionError, OutOfnvidia.com/gpu) ends Failed with
    the why in its status.reason and status.message, and no container ever ran: there is no exit code to report.
    """
    status = _status(run.pod)
    if status.get("phase") != "Failed" or not status.get("reason") or (run.container.get("state") or {}).get("terminated"):
        return ""
    message = " ".join(str(status.get("message") or "").split())
    return "node %s refused the canary pod (no container ran): %s" % (
        run.node, ": ".join(text for text in (str(status["reason"]), message) if text))


def _last_warning(events, pod):
    """The pod's most recent Warning event as {reason, message}; None without one."""
    name = metadata(pod).get("name")
    mine = [e for e in events if name and e.get("type") == "Warning"
            and (e.get("involvedObject") or {}).get("kind") == "Pod"
            and (e.get("involvedObject") or {}).get("name") == name]
    if not mine:
        return None
    # lastTimestamp is second-granular and may be unset on newer events; eventTime then.
    latest = max(mine, key=lambda e: (str(e.get("lastTimestamp") or e.get("eventTime") or ""), int(e.get("count") or 1)))
    return {"reason": str(latest.get("reason") or "Warning"), "message": " ".join(str(latest.get("message") or "").split())}


def _ended(finish, container):
    return "succeeded" if finish["type"] == "Complete" else "exited with code %s" % _exit_code(container)


def _output(lines, quoted, container):
    """A failed container's own words: its last lines, and earlier lines that match a pattern.

    Without a readable log, the termination message Kubernetes kept (the
    container's, or its log's tail with ``FallbackToLogsOnError``) stands in.
    """
    if lines is None:
        message = ((container.get("state") or {}).get("terminated") or {}).get("message") or ""
        lines = message.splitlines()
    while lines and not lines[-1].strip():
        lines = lines[:-1]  # k8s_log splits at every newline, the last one included
    tail_start = max(len(lines) - OUTPUT_LINES, 0)
    return [line for index, line in enumerate(lines)
            if index >= tail_start or any(re.search(p, line) for p in quoted)]


def node_table(lanes, pods, nodes, gitlab_landed=None):
    """One row per node a lane's pod landed on or a lane's node check considered, sorted by name.

    ``gitlab_landed`` (node name -> lanes) adds the nodes the lanes' GitLab
    job pods ran on, as landed.

    A row says whether the node is simulated and how that is known: the
    node's kwok annotation or simulated label when its Node object was read,
    else the lanes' node checks (which read the same marks earlier).
    """
    by_name = dict((object_name(n), n) for n in nodes)
    landed, matched, checked_simulated = {}, {}, set()
    for lane in lanes:
        node_check = lane["node_check"]
        for name in node_check.get("matching") or []:
            matched.setdefault(name, []).append(lane["name"])
        checked_simulated.update(node_check.get("simulated") or [])
        for pod in pods:
            name = (pod.get("spec") or {}).get("nodeName")
            if name and _owned_by(pod, lane["job_name"]):
                landed.setdefault(str(name), []).append(lane["name"])
    for name, lane_names in (gitlab_landed or {}).items():
        landed.setdefault(name, []).extend(lane_names)
    rows = []
    for name in sorted(set(landed) | set(matched)):
        markers = simulation_markers(by_name[name]) if name in by_name else []
        labels = metadata(by_name.get(name)).get("labels") or {}
        if markers:
            simulated, known_by = True, ", ".join(markers)
        elif name in checked_simulated:
            simulated, known_by = True, "the node check of its lanes"
        elif labels.get(SIMULATED_GPU_LABEL) == "true":
            simulated, known_by = False, "real (no annotation %s), GPUs simulated: label %s=true" % (
                KWOK_ANNOTATION, SIMULATED_GPU_LABEL)
        elif name in by_name:
            simulated, known_by = False, "neither annotation %s nor label %s=true" % (KWOK_ANNOTATION, SIMULATED_LABEL)
        else:
            simulated, known_by = False, "not among the nodes read; no lane's node check marked it simulated"
        rows.append({
            "name": name,
            "simulated": simulated,
            "gpus_simulated": not simulated and labels.get(SIMULATED_GPU_LABEL) == "true",
            "known_by": known_by,
            "landed": sorted(set(landed.get(name, []))),
            "matched": sorted(set(matched.get(name, []))),
        })
    return rows


def _exit_code(container):
    terminated = (container.get("state") or {}).get("terminated") or {}
    code = terminated.get("exitCode")
    return "none" if code is None else code


def _owned_by(pod, job_name):
    return any(ref.get("name") == job_name for ref in metadata(pod).get("ownerReferences") or [])


def _status(obj):
    return obj.get("status") or {}


def _first(values):
    return next(iter(values), {})


def _check_lane(lane, path):
    for key in ("name", "job_name", "gpu_class", "gpu_access", "request_text", "check"):
        if not isinstance(lane.get(key), str) or not lane[key]:
            raise ValidationError(child(path, key), "is required (a lane as gpuci.runners.canary_lanes builds it)")
    check_int(lane.get("count"), child(path, "count"), minimum=0)
    node_check = lane.get("node_check")
    if not isinstance(node_check, dict) or not isinstance(node_check.get("ok"), bool):
        raise ValidationError(child(path, "node_check"),
                              "is required: canary_lanes adds it when given the cluster's nodes")
    if not node_check["ok"] and not node_check.get("reason"):
        raise ValidationError(child(child(path, "node_check"), "reason"), "is required when ok is false")


def _checks(value, lanes, path):
    checks_path = child(path, "checks")
    checks = plain(require_mapping(value if value is not None else {}, checks_path))
    for index, lane in enumerate(lanes):
        if lane["check"] not in checks:
            raise ValidationError(child(item(child(path, "lanes"), index), "check"),
                                  "unknown check; known checks: %s" % ", ".join(sorted(checks)), lane["check"])
    for name in sorted(checks):
        check_path = child(checks_path, name)
        check = require_mapping(checks[name], check_path)
        patterns = check_str_list(check.get("evidence"), child(check_path, "evidence"))
        if not patterns:
            raise ValidationError(child(check_path, "evidence"), "needs at least one pattern")
        for index, pattern in enumerate(patterns):
            _pattern(pattern.replace(MIG_PROFILE, ""), item(child(check_path, "evidence"), index))
        if not isinstance(check.get("proof"), str) or not check["proof"]:
            raise ValidationError(child(check_path, "proof"), "must be a non-empty string", check.get("proof"))
    return checks


def _pattern(value, path):
    if not isinstance(value, str):
        raise ValidationError(path, "must be a regular expression, not %s" % type_name(value), value)
    try:
        re.compile(value)
    except re.error as error:
        raise ValidationError(path, "is not a regular expression: %s" % error, value)
    return str(value)


def _str(spec, key, path, default=None):
    value = spec.get(key)
    if value is None and default is not None:
        return default
    if not isinstance(value, str) or (default is None and not value):
        raise ValidationError(child(path, key), "must be a non-empty string", value)
    return str(value)
