# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One cluster's whole plan, put together from the roles' own plans, to review before a converge.

Takes the plans the roles compute for a cluster - ``gpu_operator``
(gpu_operator_plan), ``gitlab_runner`` (gitlab_runner_plan), ``arc_runners``
(arc_runners_plan), each absent or None when the inventory declares nothing
of it - and the canary's ``canary_lanes``; and what ``playbooks/plan.yml``
learnt of the cluster: ``changes``, the change list of ``fleet_decide``
(fleet/changes.py: what site would add, change and remove, decided from one
read of the cluster as the converge decides), or None when it did not
look, because of ``offline`` (gpuci_plan_offline) or a ``read_error`` (the
read's message: the cluster out of reach, say). It returns:

- ``releases``: every Helm release in the order site.yml applies them, each
  with its role, namespace, name, chart, version, repository (credentials
  in its URL masked) and complete values;
- ``secrets``: the Secrets the roles make, by role, namespace and name (their
  data never enters a plan);
- ``objects``: the other objects the roles make themselves (kind, namespace,
  name) and the ``namespaces`` the releases need;
- ``canary_lanes``: each lane's name, request and the pools and scale sets it
  proves;
- ``cluster``: ``{looked, why}``: whether the plan read the cluster, and
  why not;
- ``changes``: when it looked, each role's ``add``, ``change`` and
  ``remove`` entries (``{what, diff}``, secrets hidden) and ``notes``;
- ``summary``: for the console. When it looked, what site would change (the
  change list's lines, ``no changes`` for a role with none); otherwise a
  line saying it did not look and why, then one line per release, Secret
  and lane of what site would make.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.url_credentials import masked_url
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.steps import ROLES
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import require_mapping


def fleet_plan(parts):
    """See the module docstring."""
    require_mapping(parts, "fleet_plan")
    operator = parts.get("gpu_operator") or {}
    gitlab = parts.get("gitlab_runner") or {}
    arc = parts.get("arc_runners") or {}
    releases = ([_release("gpu_operator", operator["release"])] if operator else []) \
        + [_release("gitlab_runner", release) for release in gitlab.get("releases", [])] \
        + ([_release("arc_runners", arc["controller"])] if arc.get("controller") else []) \
        + [_release("arc_runners", release) for release in arc.get("releases", [])]
    secrets = [{"role": "gitlab_runner", "namespace": s["namespace"], "name": s["name"]} for s in gitlab.get("secrets", [])] \
        + [{"role": "arc_runners", "namespace": s["namespace"], "name": s["name"]} for s in arc.get("secrets", [])]
    objects = [_object("gpu_operator", obj) for obj in operator.get("objects", []) + operator.get("create_only", [])] \
        + [_object("gitlab_runner", obj) for obj in gitlab.get("access", [])] \
        + [_object("arc_runners", obj) for obj in arc.get("configmaps", [])]
    namespaces = list(dict.fromkeys([release["namespace"] for release in releases]
                                    + gitlab.get("namespaces", []) + arc.get("namespaces", [])))
    lanes = [{"name": lane["name"], "request": lane["request_text"], "gpu_class": lane["gpu_class"],
              "gitlab_pools": [pool["name"] for pool in lane.get("gitlab_pools", [])],
              "arc_scale_sets": [entry["name"] for entry in lane.get("arc_scale_sets", [])]}
             for lane in parts.get("canary_lanes") or []]
    changes = parts.get("changes")
    cluster = _looked(changes, parts)
    if cluster["looked"]:
        require_mapping(changes, "fleet_plan.changes")
        summary = _compared(changes, parts)
    else:
        summary = ["Did not look at the cluster (%s): what site would make, not what it would change" % cluster["why"]]
        summary += _summary(releases, secrets, objects, lanes)
    return {"releases": releases, "secrets": secrets, "objects": objects, "namespaces": namespaces,
            "canary_lanes": lanes, "cluster": cluster, "changes": changes["roles"] if cluster["looked"] else None,
            "summary": summary}


def _looked(changes, parts):
    """``{looked, why}``: whether the plan compared with the cluster, and why not in words."""
    if parts.get("offline"):
        return {"looked": False, "why": "gpuci_plan_offline is set"}
    if parts.get("read_error"):
        return {"looked": False, "why": "the cluster could not be read: %s" % masked_url(parts["read_error"])}
    if changes is None:
        return {"looked": False, "why": "no role converges anything here, or the tags of this run leave every role out"}
    return {"looked": True, "why": ""}


def _compared(changes, parts):
    """The change list's lines under one heading, and the planned roles it did not compare, saying why."""
    heading = ("Read the cluster, changed nothing: site would change nothing" if changes["none"] else
               "Read the cluster, changed nothing: what site would add, change and remove")
    left_out = []
    for role, name in ROLES.items():
        plan = parts.get(role)
        if not plan or role in changes["roles"]:
            continue
        why = "the tags of this run leave it out" if plan.get("converges") else "it converges nothing here (state absent, or nothing declared)"
        left_out.append("%s: not compared, %s" % (name, why))
    return [heading] + list(changes["lines"]) + left_out


def _release(role, release):
    return {"role": role, "namespace": release["namespace"], "name": release["name"],
            "chart": release.get("chart") or release.get("chart_path"), "version": release.get("chart_version"),
            # A repository URL may carry its credentials (https://user:password@host/): never written out.
            "repository": masked_url(release["chart_repo_url"]) if release.get("chart_repo_url") else None,
            "values": release.get("values") or {}}


def _object(role, obj):
    meta = obj["metadata"]
    return {"role": role, "kind": obj["kind"], "namespace": meta.get("namespace"), "name": meta["name"]}


def _summary(releases, secrets, objects, lanes):
    lines = ["release %s/%s: chart %s %s (%s)" % (r["namespace"], r["name"], r["chart"], r["version"] or "(local)", r["role"])
             for r in releases]
    lines += ["secret %s/%s (%s; data not shown)" % (s["namespace"], s["name"], s["role"]) for s in secrets]
    lines += ["%s %s (%s)" % (o["kind"], "%s/%s" % (o["namespace"], o["name"]) if o["namespace"] else o["name"], o["role"])
              for o in objects]
    for lane in lanes:
        proved = ", ".join(lane["gitlab_pools"] + lane["arc_scale_sets"]) or "nothing"
        lines.append("canary lane %s: %s, proves %s" % (lane["name"], lane["request"], proved))
    return lines or ["nothing: the inventory declares no GPU Operator, pool or scale set for this cluster"]
