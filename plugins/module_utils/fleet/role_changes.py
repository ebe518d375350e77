# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Each cluster role's own entries of the change list (fleet/changes.py), besides its objects and releases.

``pending_changes`` lists the namespaces, objects and releases of a role's
plan that are not in place; what else a converge does is the role's:
the GPU Operator's node labels and the time-slicing ConfigMap's removal,
the GitLab pools it removes and the runners it creates or deletes in
GitLab, ARC's pruning. ``fleet/decide.py`` calls these with what it decided
and what the read found; they name objects, never a Secret's data.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.fleet.changes import ADD, CHANGE, REMOVE, describe, entry
from ansible_collections.gpuci.runners.plugins.module_utils.common.url_credentials import masked_url
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.diffs import labels_diff
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import (
    CREATED_IN_ANNOTATION,
    POOL_LABEL,
    release_name,
)


def gpu_operator_changes(patches, nodes, time_slicing_configmaps):
    """The node label patches (their labels before and after) and, when it goes, the time-slicing ConfigMap."""
    labels = dict(((node.get("metadata") or {}).get("name"), (node.get("metadata") or {}).get("labels") or {})
                  for node in nodes)
    return [entry(CHANGE, "Node %s" % patch["name"], labels_diff(labels.get(patch["name"]) or {}, patch["labels"]))
            for patch in patches] + [entry(REMOVE, describe(obj)) for obj in time_slicing_configmaps]


def gitlab_runner_changes(plan, removals, found_objects, found_secrets, created_pools, stale_claim_templates=()):
    """What the GitLab runner role does besides its objects and releases.

    Each pool it removes (``removals["existing"]``): its release, the
    objects the read found of it (``found_objects``: its ServiceAccount,
    Role, RoleBinding, token Secret) and, when the role created its runner
    in GitLab (the annotation on its token Secret), that runner; the
    namespaces it deletes; the ResourceClaimTemplates no DRA pool uses any
    more (``stale_claim_templates``); and the runners it creates in GitLab:
    those of ``created_pools`` whose token Secret the read did not find (a
    found one holds the runner's token, the runner exists).
    """
    entries = []
    for name in removals["existing"]:
        release = next(r for r in removals["releases"] if r["name"] == release_name(name))
        entries.append(entry(REMOVE, "pool %s (release %s/%s)" % (name, release["namespace"], release["name"])))
        owned = [obj for obj in found_objects if _labels(obj).get(POOL_LABEL) == name]
        entries += [entry(REMOVE, describe(obj)) for obj in owned]
        entries += [entry(REMOVE, "runner of pool %s in GitLab %s" % (name, masked_url(_annotations(obj)[CREATED_IN_ANNOTATION])))
                    for obj in owned if obj.get("kind") == "Secret" and CREATED_IN_ANNOTATION in _annotations(obj)]
    entries += [entry(REMOVE, "Namespace %s" % name) for name in removals["unused_namespaces"]]
    entries += [entry(REMOVE, describe(obj)) for obj in stale_claim_templates]
    found = set(_key(obj) for obj in found_secrets)
    entries += [entry(ADD, "runner of pool %s in GitLab %s, its token into Secret %s/%s (data not shown)"
                      % (secret["pool"], masked_url(secret["gitlab_url"]), secret["namespace"], secret["name"]))
                for secret in plan["secrets"]
                if secret["pool"] in created_pools and (secret["namespace"], secret["name"]) not in found]
    return entries


def arc_runners_changes(stale_monitors, removals, stale_claim_templates=()):
    """The PodMonitors no longer wanted and what pruning removes (Secrets, ConfigMaps and ResourceClaimTemplates
    no scale set uses)."""
    return [entry(REMOVE, describe(obj)) for obj in list(stale_monitors) + removals["secrets"] + removals["configmaps"]
            + list(stale_claim_templates)]


def _labels(obj):
    return (obj.get("metadata") or {}).get("labels") or {}


def _annotations(obj):
    return (obj.get("metadata") or {}).get("annotations") or {}


def _key(obj):
    metadata = obj.get("metadata") or {}
    return metadata.get("namespace"), metadata.get("name")
