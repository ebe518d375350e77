# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the gitlab_runner role removes, from its plan and what it found on the cluster.

Every pool the role installed left a manager ServiceAccount labelled with the
fleet and the pool (annotated with its job namespace), so pools the inventory
no longer names are still found. Given the plan's pools and those accounts:

- ``names``: pools to remove: every pool with ``gitlab_runner_state: absent``;
  otherwise the pools marked absent plus, with ``gitlab_runner_prune``, the
  found pools the inventory no longer declares;
- ``label_selectors``: what finds the objects of those pools the role made
  itself (the fleet's labels, ``labels``, and the pool label);
- ``existing``: of those, the pools the cluster still holds (their manager
  ServiceAccount was found): what a rerun still has to remove;
  ``found_pools``: every pool of the fleet the cluster holds;
- ``releases``: their Helm releases as ``helm_releases`` takes them (state
  absent, deleted in the foreground, helm not waiting), where they were
  found, else where this inventory would put them;
- ``manager_wait``: what waits until their managers have stopped (their
  jobs ended) and their Deployments are gone (manager_stop.py);
- ``kept_namespaces``: namespaces still in use: those present pools need and
  those of found pools that survive this run undeclared (prune off);
- ``unused_namespaces``: of the cluster's namespaces (``namespaces``, their
  metadata), those the role created for this fleet (they carry every fleet
  label, ``labels``) that no kept pool uses: the role deletes them
  (``unused_namespace_objects``, for one delete) and waits until none of them
  is left (``unused_namespace_selectors`` select them by name);
- ``object_reads``: what finds the removed pools' own objects wherever they
  are (job namespaces may differ per pool), as ``k8s_reads`` takes them;
  ``gitlab_runner_removed_objects`` then says what of them to delete.

``whole_fleet_refusal`` is the second guard against an inventory mistake
(the first is the preflight's refusal of a misspelt variable,
common/known_variables.py): pruning removes what the cluster holds and the
inventory lacks, so a pool list that went missing (misspelt, in a file
the inventory no longer loads, another inventory pointed at this cluster)
would remove the whole fleet, managers with running jobs included. A
converge that would remove every pool the cluster holds while the inventory
declares none of them is refused before anything changes, unless the user
asked for it: ``gitlab_runner_state: absent`` or
``gitlab_runner_allow_removing_all_pools: true`` (``ALLOW_REMOVING_ALL``).
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import (
    ALLOW_REMOVING_ALL,
    CREATED_IN_ANNOTATION,
    JOB_NAMESPACE_ANNOTATION,
    POOL_LABEL,
    needed_namespaces,
    release_name,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.manager_stop import manager_wait
from ansible_collections.gpuci.runners.plugins.module_utils.common.ownership_labels import label_selectors, labels_match, set_selector
from ansible_collections.gpuci.runners.plugins.module_utils.common.release_names import GITLAB_RELEASE_PREFIX
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    child,
    object_list,
    require_mapping,
)

# The role's own objects of each pool, as reads of k8s_reads (Secrets' data hidden).
# A DRA pool's ResourceClaimTemplate too: on a cluster without resource.k8s.io/v1 its read finds nothing, no error.
POOL_OBJECT_KINDS = (("role_bindings", "rbac.authorization.k8s.io/v1", "RoleBinding"),
                     ("roles", "rbac.authorization.k8s.io/v1", "Role"),
                     ("claim_templates", "resource.k8s.io/v1", "ResourceClaimTemplate"),
                     ("service_accounts", "v1", "ServiceAccount"),
                     ("secrets", "v1", "Secret"))
# Every namespace carries its name as this label (Kubernetes 1.21+).
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"


def gitlab_runner_removals(value):
    """See the module docstring. ``value``: pools (the plan's), found (ServiceAccount metadata), state, prune,
    namespace (gitlab_runner_namespace), timeout (seconds), and optionally namespaces (Namespace metadata) and
    labels (the fleet's labels)."""
    require_mapping(value, "gitlab_runner_removals")
    pools = value["pools"]
    found = {meta["name"][len(GITLAB_RELEASE_PREFIX):]: meta for meta in value.get("found") or []
             if meta["name"].startswith(GITLAB_RELEASE_PREFIX)}
    present = [pool["name"] for pool in pools if pool["state"] == "present"]
    absent = [pool["name"] for pool in pools if pool["state"] == "absent"]
    if value["state"] == "absent":
        doomed = _unique(list(found) + [pool["name"] for pool in pools])
    elif value["prune"]:
        doomed = _unique([name for name in found if name not in present] + absent)
    else:
        doomed = absent
    releases = [{"name": release_name(name), "namespace": found[name]["namespace"] if name in found
                 else value["namespace"], "state": "absent", "timeout": value["timeout"],
                 # Not helm's wait: the role waits for the manager to stop (manager_stop.py says why).
                 "wait": False, "cascade": "foreground"} for name in doomed]
    surviving = [meta for name, meta in found.items() if name not in doomed and name not in present]
    kept = [] if value["state"] == "absent" else needed_namespaces(pools, value["namespace"])
    for meta in surviving:
        kept += [meta["namespace"]] + [ns for ns in [(meta.get("annotations") or {}).get(JOB_NAMESPACE_ANNOTATION)] if ns]
    kept = sorted(set(kept))
    fleet_labels = dict(value.get("labels") or {})
    owned = [meta["name"] for meta in value.get("namespaces") or []
             if fleet_labels and labels_match(meta.get("labels") or {}, fleet_labels)]
    selectors = (label_selectors(fleet_labels) + [set_selector(POOL_LABEL, doomed)]) if doomed else []
    unused = sorted(set(owned) - set(kept))
    return {"names": doomed, "label_selectors": selectors,
            "existing": [name for name in doomed if name in found], "found_pools": list(found),
            "releases": releases,
            "manager_wait": manager_wait(releases, value["timeout"]), "kept_namespaces": kept,
            "unused_namespaces": unused,
            "unused_namespace_objects": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
                                         for name in unused],
            "unused_namespace_selectors": label_selectors(fleet_labels) + [set_selector(NAMESPACE_NAME_LABEL, unused)]
            if unused else [],
            "object_reads": [{"key": key, "api_version": api_version, "kind": kind, "label_selectors": selectors,
                              "hidden_fields": ["data", "stringData"]}
                             for key, api_version, kind in POOL_OBJECT_KINDS] if doomed else []}


def whole_fleet_refusal(pools, removals, settings):
    """Why the converge must not remove what ``removals`` names ('' when it may).

    ``pools`` are the plan's (the inventory's, defaults filled in),
    ``removals`` what ``gitlab_runner_removals`` decided from them and the
    cluster, ``settings`` the plan's ``removal`` (``state``, ``fleet``,
    ``allow_removing_all``). Refused: state present, and the removals take
    every pool the cluster holds of the fleet, none of which the inventory
    declares (present or absent) - what pruning does when the pool list is
    lost. A pool declared ``state: absent``, or one kept, shows the inventory
    knows the fleet: then the removals go ahead.
    """
    held, existing = removals["found_pools"], removals["existing"]
    if settings["state"] != "present" or settings.get("allow_removing_all") or not held:
        return ""
    declared = set(pool["name"] for pool in pools)
    if set(held) - set(existing) or declared & set(held):
        return ""
    doomed = ", ".join("%s/%s" % (release["namespace"], release["name"]) for release in removals["releases"]
                       if release["name"] in set(release_name(name) for name in held))
    inventory = ("declares only %s" % ", ".join(sorted(declared))) if declared else "declares no pool"
    return ("gitlab_runner_pools: this converge would remove every pool of fleet %s the cluster holds, releases %s, "
            "while the inventory declares none of them (gitlab_runner_pools %s); nothing was changed. To remove "
            "them, set gitlab_runner_state: absent (the whole fleet) or %s: true for this run; to keep them, "
            "declare them in gitlab_runner_pools (is the variable misspelt, or its file not loaded?)"
            % (settings.get("fleet", "?"), doomed, inventory, ALLOW_REMOVING_ALL))


def gitlab_runner_removed_objects(spec, path="gitlab_runner_removed_objects"):
    """``{"objects", "created_runners", "created_pools"}``: what of the removed pools' objects to delete.

    ``spec`` holds ``reads`` (the ``reads`` of the ``k8s_reads`` answer to
    ``object_reads``; missing when nothing was read). ``objects`` are every
    object found, for one delete; ``created_runners`` the runners the role
    created in GitLab for those pools (their token Secret carries the GitLab
    URL, ``CREATED_IN_ANNOTATION``): ``{pool, api_url}`` each, to delete them
    in GitLab too; ``created_pools`` names those pools, in words.
    """
    require_mapping(spec, path)
    reads = require_mapping(spec.get("reads") or {}, child(path, "reads"))
    objects = [obj for key in reads
               for obj in object_list((reads[key] or {}).get("resources"), child(child(path, "reads"), key))]
    created = []
    for obj in objects:
        metadata = obj.get("metadata") or {}
        annotations = metadata.get("annotations") or {}
        if obj.get("kind") == "Secret" and CREATED_IN_ANNOTATION in annotations:
            created.append({"pool": (metadata.get("labels") or {}).get(POOL_LABEL),
                            "api_url": annotations[CREATED_IN_ANNOTATION]})
    return {"objects": objects, "created_runners": created,
            "created_pools": ", ".join(str(runner["pool"]) for runner in created)}


def _unique(names):
    return list(dict.fromkeys(names))
