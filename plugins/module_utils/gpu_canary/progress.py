# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How far the canary's Jobs got: which are still running, and which pods have a log to read.

The role asks both while it gathers what the verdict judges, and answers
them by the rules the verdict judges with (gpu_canary/verdict.py uses
``job_finish``): with ``backoffLimit: 0`` one succeeded or failed pod ends a
Job, and a pod on a simulated node never ran a container, so it has no log.

A DRA lane's pod is also waited for while it runs: the devices allocated to
its claim are in the claim's status only until the pod is done
(gpu_canary/claims.py), so the role reads the claims, every second, until
each such pod is seen with its claims allocated, or can no longer be
(``claims_pending``).
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.claims import asks_for_claims, claims_allocated
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.lanes import is_simulated
from ansible_collections.gpuci.runners.plugins.module_utils.k8s.objects import metadata, object_name
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    child,
    object_list,
    optional_str_list,
    reject_unknown_keys,
    require_mapping,
)

INPUT_KEYS = frozenset(("started", "jobs", "pods", "nodes", "claims"))
# A pod in these phases has started its container, so its log exists.
STARTED_PHASES = frozenset(("Running", "Succeeded", "Failed"))


def canary_progress(spec, path="canary_progress"):
    """``{unfinished, log_pods}`` from the cluster's answers.

    ``spec`` holds ``started`` (the Jobs this run started, as the role built
    them, or their names),
    ``jobs``, ``pods`` and ``nodes`` (as kubernetes.core.k8s_info returns
    them). ``unfinished``: the started Jobs that have not ended, one not
    found among them; ``log_pods``: the pods (as read, in their order) that
    started their container on a node that is not simulated. The other
    objects the role applied with the Jobs (a DRA lane's claim template)
    are not waited for.

    With ``claims`` (ResourceClaim objects as read) it also says
    ``claims_pending``: the started Jobs whose pod claims devices (their
    objects as built say so) and has not been seen with every claim
    allocated, while it still may be: its Job has not ended, and its pod is
    neither done nor refused by the scheduler.
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    started = optional_str_list(dict(spec, started=_names(spec.get("started"))), "started", path)
    jobs = object_list(spec.get("jobs"), child(path, "jobs"))
    pods = object_list(spec.get("pods"), child(path, "pods"))
    nodes = object_list(spec.get("nodes"), child(path, "nodes"))
    finished = set(object_name(job) for job in jobs if job_finish(job))
    simulated = set(object_name(node) for node in nodes if is_simulated(node))
    progress = {
        "unfinished": [name for name in started if name not in finished],
        "log_pods": [pod for pod in pods if _has_log(pod, simulated)],
    }
    if "claims" in spec:
        claims = object_list(spec.get("claims"), child(path, "claims"))
        progress["claims_pending"] = [name for name in _claiming(spec.get("started")) if name not in finished
                                      and _claim_pending(_pod_of(pods, name), claims)]
    return progress


def _names(jobs):
    """The Jobs' names; names stay names, and what is not a list is left to the check."""
    if not isinstance(jobs, (list, tuple)):
        return jobs
    return [object_name(job) if isinstance(job, Mapping) else job for job in jobs
            if not isinstance(job, Mapping) or job.get("kind", "Job") == "Job"]


def _claiming(started):
    """The names of the started Jobs (as built) whose pod claims devices; names alone say nothing of claims."""
    return [object_name(job) for job in started or [] if isinstance(job, Mapping) and job.get("kind", "Job") == "Job"
            and asks_for_claims(((((job.get("spec") or {}).get("template") or {}).get("spec")) or {}))]


def _pod_of(pods, job_name):
    return next((pod for pod in pods if any(ref.get("name") == job_name
                                            for ref in metadata(pod).get("ownerReferences") or [])), None)


def _claim_pending(pod, claims):
    """Whether a DRA Job's pod may still be seen with its claims allocated (a pod not made yet may)."""
    if pod is None:
        return True
    status = pod.get("status") or {}
    if status.get("phase") in ("Succeeded", "Failed"):
        return False  # done: the allocation is gone
    if any(c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable" for c in status.get("conditions") or []):
        return False  # the scheduler found no device; the Jobs' wait and the verdict say why
    return not claims_allocated(pod, claims)


def job_finish(job):
    """The condition that ended a Job (Complete or Failed), ``{}`` while it runs.

    With backoffLimit 0 one succeeded or failed pod ends the Job; a condition
    the Job does not list yet is reported by its type alone.
    """
    status = job.get("status") or {}
    kind = "Complete" if status.get("succeeded") else "Failed" if status.get("failed") else ""
    if not kind:
        return {}
    return next((c for c in status.get("conditions") or [] if c.get("type") == kind), {"type": kind})


def _has_log(pod, simulated):
    node = (pod.get("spec") or {}).get("nodeName")
    return bool(node) and node not in simulated and (pod.get("status") or {}).get("phase") in STARTED_PHASES
