# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The proof report: the canary's verdict, the cluster it ran on and the charts installed there.

The gpu_canary role records what the cluster answered and writes files; this
module builds the whole document of ``roles/gpu_canary/files/proof-report.schema.json``
from those answers. The lanes, node table and summary are the verdict's
(``canary_verdict``); the chart table comes from ``helm list --output json``
as the role ran it, so a cluster where Helm could not list its releases still
gets a report, with the reason in ``charts_note``.
"""

from __future__ import annotations

import json
import re

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.verdict import INPUT_KEYS as VERDICT_KEYS
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.verdict import canary_verdict
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    child,
    reject_unknown_keys,
    require_mapping,
    type_name,
)

SCHEMA_VERSION = 2
CLUSTER_KEYS = frozenset(("name", "context", "kubernetes_version", "simulated"))
INPUT_KEYS = VERDICT_KEYS | frozenset(("cluster", "namespace", "helm_list", "generated_at", "gitlab_mode",
                                      "report_charts"))
NOT_COLLECTED = "not collected (gpu_canary_report_charts is false)"
# helm list shows "<chart>-<version>"; versions start with a digit or v<digit>.
_CHART = re.compile(r"^(.+?)-(v?[0-9]+\.[^ ]*)$")


def proof_report(spec, path="report"):
    """Return the proof report document.

    ``spec`` holds what ``canary_verdict`` takes, plus ``cluster`` (``name``,
    ``context``, ``kubernetes_version`` and ``simulated``, the inventory's
    word that the whole cluster is simulated), ``namespace`` (the canary's),
    ``helm_list`` (the result of the role's ``helm list --all-namespaces
    --deployed --output json`` command, or None when charts are not
    collected) and ``generated_at``. In GitLab mode (``gitlab``, the
    module canary_gitlab_pipeline's result) the report also has ``gitlab``,
    and each lane its GitLab jobs (canary_verdict).

    ``gitlab_mode`` and ``report_charts`` false (the plan's GitLab mode,
    gpu_canary_report_charts) set aside ``gitlab`` and ``helm_list``: the
    role passes what it registered, which an earlier run of the role in the
    same play may have left.
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    spec = dict(spec)
    if spec.pop("gitlab_mode", True) is False:
        spec["gitlab"] = None
    if spec.pop("report_charts", True) is False:
        spec["helm_list"] = None
    verdict = canary_verdict(dict((key, spec[key]) for key in VERDICT_KEYS if key in spec), path)
    cluster = _cluster(spec.get("cluster"), child(path, "cluster"))
    charts, charts_note = chart_table(spec.get("helm_list"), child(path, "helm_list"))
    report = {
        "schema_version": SCHEMA_VERSION,
        "generated_at": _text(spec.get("generated_at"), child(path, "generated_at")),
        "cluster": dict(cluster, simulated=bool(verdict["simulated_nodes"]) or cluster["simulated"],
                        simulated_nodes=verdict["simulated_nodes"]),
        "namespace": _text(spec.get("namespace"), child(path, "namespace")),
        "charts": charts,
        "charts_note": charts_note,
        "summary": verdict["summary"],
        "nodes": verdict["nodes"],
        "lanes": verdict["lanes"],
    }
    if spec.get("gitlab") is not None:
        report["gitlab"] = dict(gitlab_summary(spec["gitlab"]), negative_control=verdict["negative_control"])
        report["gitlab"]["pipeline_outcome"] = pipeline_outcome(report["gitlab"]["pipeline_status"], verdict["lanes"],
                                                                verdict["negative_control"])
    return report


def pipeline_outcome(status, lanes, control):
    """The pipeline's status as a person should read it: which jobs made it so, and whether that is the simulation.

    A job on a simulated node ends however kwok leaves it (GitLab Runner
    reports ``runner_system_failure``); that fails the pipeline without any
    fault of the runners, and its lane stays ``scheduled-only``, never passed.
    """
    if not status or status == "success":
        return status or "none"
    jobs = [job for lane in lanes for job in lane.get("gitlab_jobs") or []] + ([control] if control["job_id"] else [])
    unsuccessful = [job for job in jobs if job["status"] != "success"]
    groups = (("ran on simulated (kwok) nodes, where no container runs",
               [job for job in unsuccessful if job["node_simulated"]]),
              ("got no runner", [job for job in unsuccessful if not job["runner"]]),
              ("did not succeed on a real node",
               [job for job in unsuccessful if job["runner"] and not job["node_simulated"]]))
    named = [(words, sorted(set(job["job_name"] for job in group))) for words, group in groups if group]
    if not named:
        return status
    if len(named) == 1 and named[0][0] == groups[0][0]:
        return ("%s, only because %s %s: their lanes are scheduled-only (not proved, not passed), and every job "
                "on a real node succeeded" % (status, _jobs(named[0][1]), groups[0][0]))
    return "%s: %s" % (status, "; ".join("%s %s" % (_jobs(names), words) for words, names in named))


def _jobs(names):
    return "job%s %s" % ("s" if len(names) > 1 else "", ", ".join(names))


def gitlab_summary(gitlab):
    """The report's word on the canary pipeline (GitLab mode): project, ref, commit, pipeline; never a token.

    Only these fields are copied from the module's result, so nothing else
    it carried can reach the report.
    """
    project = gitlab.get("project") or {}
    pipeline = gitlab.get("pipeline") or {}
    commit = gitlab.get("commit") or {}
    return {
        "project": {"id": project.get("id"), "path": project.get("path"), "web_url": project.get("web_url")},
        "ref": gitlab.get("ref"),
        "file": gitlab.get("file"),
        "committed": commit.get("id"),
        "commit_url": commit.get("web_url"),
        "pipeline_id": pipeline.get("id"),
        "pipeline_url": pipeline.get("web_url"),
        "pipeline_status": pipeline.get("status"),
        "pods_note": gitlab.get("pods_note") or "",
        # A step that failed after the commit (or the pipeline) was made: the module's message, else "".
        "error": str(gitlab.get("msg") or "") if gitlab.get("failed") else "",
    }


def chart_table(helm_list, path="helm_list"):
    """``(charts, note)`` from a ``helm list --output json`` command result; None means not collected.

    Each row names the release, its namespace, chart, chart version and app
    version, sorted by namespace and name. A failed listing gives no rows
    and a note quoting Helm's error.
    """
    if helm_list is None:
        return [], NOT_COLLECTED
    require_mapping(helm_list, path)
    if helm_list.get("rc", 1) != 0:
        error = helm_list.get("stderr") or helm_list.get("msg") or "no error output"
        return [], "helm list failed: %s" % str(error).strip()
    try:
        releases = json.loads(helm_list.get("stdout") or "[]")
    except ValueError as error:
        return [], "helm list printed no JSON: %s" % error
    if not isinstance(releases, list):
        return [], "helm list printed %s, not a list of releases" % type_name(releases)
    rows = []
    for release in sorted(releases, key=lambda r: (str(r.get("namespace", "")), str(r.get("name", "")))):
        match = _CHART.match(str(release.get("chart", "")))
        chart, version = match.groups() if match else (str(release.get("chart", "")), "")
        rows.append({"release": str(release.get("name", "")), "namespace": str(release.get("namespace", "")),
                     "chart": chart, "chart_version": version, "app_version": str(release.get("app_version") or "")})
    return rows, ""


def _cluster(value, path):
    cluster = require_mapping(value, path)
    reject_unknown_keys(cluster, CLUSTER_KEYS, path)
    if not isinstance(cluster.get("simulated", False), bool):
        raise ValidationError(child(path, "simulated"), "must be a boolean", cluster.get("simulated"))
    return {
        "name": _text(cluster.get("name"), child(path, "name")),
        "context": str(cluster.get("context") or ""),
        "kubernetes_version": str(cluster.get("kubernetes_version") or "unknown"),
        "simulated": bool(cluster.get("simulated", False)),
    }


def _text(value, path):
    if not isinstance(value, str) or not value:
        raise ValidationError(path, "must be a non-empty string", value)
    return str(value)
