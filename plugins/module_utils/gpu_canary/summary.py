# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the gpu_canary role tells the user about its lanes: which have no node, what check mode would do, which failed.

The lanes (module_utils/gpu_canary/lanes.py, with their ``node_check``)
and the proof report (module_utils/gpu_canary/proof_report.py) hold the
facts; this turns them into the lines the role shows and the failed lanes
it fails or warns with, so the role's tasks only print them.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    child,
    object_list,
    reject_unknown_keys,
    require_mapping,
)

INPUT_KEYS = frozenset(("lanes", "gitlab_mode", "report"))
JOB_KIND = {False: "a canary Job", True: "a GitLab job per pool (a canary Job for ARC scale sets)"}


def canary_summary(spec, path="canary_summary"):
    """``{unplaceable, check_mode, failed, failures}``.

    ``spec`` holds ``lanes`` (canary_lanes' lanes, matched against the
    nodes), ``gitlab_mode`` (the plan's) and ``report`` (the proof report,
    None before it is made). ``unplaceable``: a ``name`` and ``message`` per
    lane whose nodes fail its checks; ``check_mode``: what a real run would
    do; ``failed``: the names of the report's failed lanes; ``failures``:
    how many, each with its reason.
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    lanes = object_list(spec.get("lanes"), child(path, "lanes"))
    placeable = [lane["name"] for lane in lanes if _node_check(lane).get("ok")]
    unplaceable = [lane for lane in lanes if not _node_check(lane).get("ok")]
    failed = [lane for lane in _report_lanes(spec.get("report"), child(path, "report")) if lane.get("result") == "failed"]
    return {
        "unplaceable": [{"name": lane["name"], "message": "Lane %s (%s, %s): %s" % (
            lane["name"], lane.get("gpu_class"), lane.get("request_text"), _node_check(lane).get("reason"))}
            for lane in unplaceable],
        "check_mode": "%s would get %s; %s would fail its node checks." % (
            ", ".join(placeable) or "no lane", JOB_KIND[bool(spec.get("gitlab_mode"))],
            ", ".join(lane["name"] for lane in unplaceable) or "no lane"),
        "failed": [lane["name"] for lane in failed],
        "failures": "%d lane(s) failed: %s." % (
            len(failed), "; ".join("%s: %s" % (lane["name"], lane.get("reason")) for lane in failed)),
    }


def _node_check(lane):
    return lane.get("node_check") or {}


def _report_lanes(report, path):
    if report is None:
        return []
    return object_list(require_mapping(report, path).get("lanes"), child(path, "lanes"))
