# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a converge would add, change and remove, per role, in words and short diffs, without a secret.

Built where the converge decides, from the same read and the same rules:
``pending_changes`` makes the entries of each role's namespaces, objects
and releases (``object_change``, ``release_change``), ``fleet/decide.py``
adds each role's own (``fleet/role_changes.py``: node labels, removals,
GitLab's runners), and
``change_list`` puts the decided roles' entries in one list. ``playbooks/plan.yml``
and the converge (``roles/converge``, in check mode too) both call
``fleet_decide``, so ``plan`` and ``site --check --diff`` list the same.

An entry is ``{"action": "add" | "change" | "remove", "what", "diff"}``:
``what`` names the object (``Secret ns/name (data not shown)``, ``release
ns/name``, ``runner of pool l40s in GitLab https://...``) and ``diff`` holds
the short diff of a change (``fleet/diffs.py``: secrets hidden).
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.url_credentials import masked_url
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.diffs import object_diff, values_diff
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.steps import ROLES
from ansible_collections.gpuci.runners.plugins.module_utils.k8s.helm_releases import same_chart, wanted_chart

ADD, CHANGE, REMOVE = "add", "change", "remove"
ACTIONS = (ADD, CHANGE, REMOVE)
# Helm's status of a release it installed completely.
DEPLOYED = "deployed"


def entry(action, what, diff=()):
    return {"action": action, "what": what, "diff": list(diff)}


def describe(obj):
    """``Kind namespace/name`` (``Kind name`` for a cluster-wide object); a Secret says its data is not shown."""
    metadata = obj.get("metadata") or {}
    where = "%s/%s" % (metadata["namespace"], metadata.get("name")) if metadata.get("namespace") else metadata.get("name")
    hidden = " (data not shown)" if obj.get("kind") == "Secret" else ""
    return "%s %s%s" % (obj.get("kind"), where, hidden)


def object_change(desired, live):
    """The entry of an object not in place: add when the read did not find it, else change with its diff."""
    if live is None:
        return entry(ADD, describe(desired))
    return entry(CHANGE, describe(desired), object_diff(desired, live))


def release_change(release, record, values, action):
    """The entry of a release ``helm_releases.decide`` would act on (``action``: install, upgrade, uninstall).

    ``record`` and ``values`` are the deployed revision's (``pending_changes.release_records``).
    """
    what = "release %s/%s" % (release["namespace"], release["name"])
    if action == "install":
        return entry(ADD, "%s (chart %s)" % (what, _chart_text(release)))
    if action == "uninstall":
        return entry(REMOVE, what)
    diff = []
    wanted = wanted_chart(release)
    if not same_chart(record.get("chart", ""), wanted):
        diff.append("chart: %s -> %s" % (record.get("chart") or "(unknown)", wanted))
    if record.get("status") != DEPLOYED:
        diff.append("status: %s (upgraded whatever it holds)" % (record.get("status") or "(unknown)"))
    return entry(CHANGE, what, diff + values_diff(values or {}, release.get("values") or {}))


def change_list(decision):
    """``{"roles": {role: {"name", "add", "change", "remove", "notes"}}, "lines", "none"}`` of the decided roles.

    Each role's ``changes`` and ``notes`` (what its decision found) by
    action, each entry ``{what, diff}``; ``lines`` for the console: per role
    a count or ``no changes``, then each entry and its diff; ``none``: no
    role has anything to add, change or remove.
    """
    roles, lines = {}, []
    for role in decision["decided"]:
        made = decision[role]
        changes = made.get("changes") or []
        part = dict((action, [{"what": e["what"], "diff": list(e["diff"])} for e in changes if e["action"] == action])
                    for action in ACTIONS)
        part.update(name=ROLES[role], notes=list(made.get("notes") or []))
        roles[role] = part
        counts = ["%d to %s" % (len(part[action]), action) for action in ACTIONS if part[action]]
        lines.append("%s: %s" % (ROLES[role], ", ".join(counts) or "no changes"))
        for action in ACTIONS:
            for item in part[action]:
                lines.append("  %s %s" % (action, item["what"]))
                lines += ["      " + line for line in item["diff"]]
        lines += ["  note: " + note for note in part["notes"]]
    return {"roles": roles, "lines": lines, "none": not any(part[a] for part in roles.values() for a in ACTIONS)}


def _chart_text(release):
    if release.get("chart_path"):
        return "from %s" % masked_url(release["chart_path"])
    return "%s %s" % (release.get("chart"), release.get("chart_version"))
