# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How far the canary's Jobs got: which are still running, and which pods have a log to read.

The role asks both while it gathers what the verdict judges, and answers
them by the rules the verdict judges with (gpu_canary/verdict.py uses
``job_finish``): with ``backoffLimit: 0`` one succeeded or failed pod ends a
Job, and a pod on a simulated node never ran a container, so it has no log.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.lanes import is_simulated
from ansible_collections.gpuci.runners.plugins.module_utils.k8s.objects import object_name
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    child,
    object_list,
    optional_str_list,
    reject_unknown_keys,
    require_mapping,
)

INPUT_KEYS = frozenset(("started", "jobs", "pods", "nodes"))
# A pod in these phases has started its container, so its log exists.
STARTED_PHASES = frozenset(("Running", "Succeeded", "Failed"))


def canary_progress(spec, path="canary_progress"):
    """``{unfinished, log_pods}`` from the cluster's answers.

    ``spec`` holds ``started`` (the Jobs this run started, as the role built
    them, or their names),
    ``jobs``, ``pods`` and ``nodes`` (as kubernetes.core.k8s_info returns
    them). ``unfinished``: the started Jobs that have not ended, one not
    found among them; ``log_pods``: the pods (as read, in their order) that
    started their container on a node that is not simulated.
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    started = optional_str_list(dict(spec, started=_names(spec.get("started"))), "started", path)
    jobs = object_list(spec.get("jobs"), child(path, "jobs"))
    pods = object_list(spec.get("pods"), child(path, "pods"))
    nodes = object_list(spec.get("nodes"), child(path, "nodes"))
    finished = set(object_name(job) for job in jobs if job_finish(job))
    simulated = set(object_name(node) for node in nodes if is_simulated(node))
    return {
        "unfinished": [name for name in started if name not in finished],
        "log_pods": [pod for pod in pods if _has_log(pod, simulated)],
    }


def _names(jobs):
    """The Jobs' names; names stay names, and what is not a list is left to the check."""
    if not isinstance(jobs, (list, tuple)):
        return jobs
    return [object_name(job) if isinstance(job, Mapping) else job for job in jobs]


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
