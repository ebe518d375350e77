# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a converge would still change, decided from the role's one read of the cluster.

A rerun that changes nothing should cost one read, not one module run per
object kind and release (each about 0.45 CPU-s of Python start and client
import, measured by ``make bench``). Each cluster role reads, in its one
``k8s_reads`` run, the objects it applies, the Helm release records of its
releases and the Deployments it waits for; this says what of its plan the
cluster does not hold yet. When nothing is pending the role skips its apply
tasks and verifies from that same read.

Conservative by construction: whatever cannot be compared counts as pending,
so a wrong answer costs only the apply the role would have run anyway.

- An object is in place when the live object holds every field the desired
  one sets (the merge semantics of ``kubernetes.core.k8s`` ``state: present``:
  fields it does not set are the server's). A Secret's ``stringData`` is
  compared with the live ``data`` it becomes.
- A release is in place when ``helm_releases.decide`` (the module's own rule)
  says unchanged, from Helm's release record: its latest revision (chart,
  status and user values), which ``k8s_reads`` decodes from Helm's storage
  Secret.
- A Deployment is in place when its ``Available`` condition is True.

Besides the names, ``apply`` is what the role's one ``kubernetes.core.k8s``
call must apply, in order: the namespaces that do not exist yet (with the
role's labels: a namespace that exists is used as it is), then the objects
not in place. ``create_only`` objects are applied only when missing (the
RuntimeClass, which the GPU Operator owns once it runs). In check mode
objects inside a namespace that does not exist yet are left out: the API
server refuses even a dry-run create there, and the namespace's creation is
reported already.

Only names go to the console: ``apply`` may hold Secrets, so the task that
computes this is ``no_log``.
"""

from __future__ import annotations

import base64

from ansible_collections.gpuci.runners.plugins.module_utils.fleet.changes import object_change, release_change
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.diffs import holds
from ansible_collections.gpuci.runners.plugins.module_utils.k8s.helm_releases import decide
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    child,
    object_list,
    reject_unknown_keys,
    require_mapping,
)

INPUT_KEYS = frozenset(("namespaces", "namespace_labels", "objects", "create_only", "found", "releases",
                        "release_records", "awaited", "steps", "check_mode", "apply_releases", "crds_from", "readback"))
# Helm's status of a release it installed completely, CRDs included.
DEPLOYED = "deployed"


def pending_changes(spec, path="pending_changes"):
    """``{objects, releases, unavailable, steps, settled, summary, apply, apply_releases, readback, changes, notes}``.

    What is pending, and what the converge must apply and read back;
    ``changes`` are the entries of the change list (fleet/changes.py: each
    namespace, object and release to add, change or remove, with the short
    diff of a change, no secret) and ``notes`` the Deployments a converge
    waits for that no release of this run changes.

    ``spec`` holds ``namespaces`` (names that must exist),
    ``namespace_labels`` (the labels of those the role creates), ``objects``
    (desired Kubernetes objects), ``create_only`` (objects made only when
    missing), ``found`` (live objects, namespaces included, as ``k8s_reads``
    returns them), ``releases`` (``helm_releases`` entries),
    ``release_records`` (the revisions of those releases, as ``k8s_reads``
    answers Helm's storage Secrets with ``helm_releases``),
    ``awaited`` (live Deployments that must be Available), ``steps`` (what
    else the role must do this run, already named: removals, calls to another
    API), ``check_mode``, ``apply_releases`` (the releases a converge
    applies, when not ``releases`` themselves), ``crds_from`` (the release
    of ``apply_releases`` whose chart brings the CRDs the others need) and
    ``readback`` (the reads that verify a converge). Every key is optional.

    ``apply_releases`` and ``readback`` come back as given, or empty when
    nothing is pending (nothing to apply, and the one read verifies); the
    read-back is empty in check mode too, where nothing was applied. While
    Helm holds no deployed record of ``crds_from``, the other releases go in
    the wave after it (``helm_releases``' ``wave``): Helm installs a chart's
    CRDs with its first revision and never removes them, so once it is
    deployed they all go out at once.
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    found = _index(object_list(spec.get("found"), child(path, "found")))
    labels = spec.get("namespace_labels") or {}
    namespaces = [namespace for namespace in (_namespace(name, labels) for name in spec.get("namespaces") or [])
                  if object_key(namespace) not in found]
    objects = [obj for obj in object_list(spec.get("objects"), child(path, "objects"))
               if not in_place(obj, found.get(object_key(obj)))]
    objects += [obj for obj in object_list(spec.get("create_only"), child(path, "create_only"))
                if object_key(obj) not in found]
    changes = [object_change(obj, found.get(object_key(obj))) for obj in namespaces + objects]
    missing = set(obj["metadata"]["name"] for obj in namespaces)
    apply = namespaces + [obj for obj in objects
                          if not (spec.get("check_mode") and (obj.get("metadata") or {}).get("namespace") in missing)]
    names = [_describe(obj) for obj in namespaces + objects]
    records = release_records(object_list(spec.get("release_records"), child(path, "release_records")))
    releases = []
    for release in object_list(spec.get("releases"), child(path, "releases")):
        deployed, values = records.get((release["namespace"], release["name"]), (None, None))
        action = decide(dict(release, state=release.get("state", "present")), deployed, values)
        if action not in ("unchanged", "absent"):
            releases.append("%s/%s (%s)" % (release["namespace"], release["name"], action))
            changes.append(release_change(release, deployed, values, action))
    unavailable = [_describe(d) for d in object_list(spec.get("awaited"), child(path, "awaited")) if not available(d)]
    steps = [str(step) for step in spec.get("steps") or []]
    pending = names + releases + ["%s (not Available)" % name for name in unavailable] + steps
    to_apply = spec["apply_releases"] if spec.get("apply_releases") is not None else spec.get("releases") or []
    to_apply = _after_crds(to_apply, spec.get("crds_from"), records)
    return {"objects": names, "releases": releases, "unavailable": unavailable, "steps": steps,
            "settled": not pending, "apply": apply,
            "apply_releases": list(to_apply) if pending else [],
            "readback": [] if not pending or spec.get("check_mode") else list(spec.get("readback") or []),
            "summary": "To change: %s" % ", ".join(pending) if pending else
            "Nothing to change: the plan is in place (verified from the read)",
            "changes": changes, "notes": _waits(unavailable, releases)}


def _waits(unavailable, releases):
    """The Deployments a converge waits for, in words; none while a release changes (it makes or rolls them)."""
    return [] if releases else ["%s is not Available: a converge waits for it" % name for name in unavailable]


def _after_crds(releases, crds_from, records):
    """``releases``, those other than ``crds_from`` in the wave after it while it is not deployed."""
    if not crds_from:
        return list(releases)
    key = (crds_from["namespace"], crds_from["name"])
    record, _values = records.get(key, (None, None))
    if record and record["status"] == DEPLOYED:
        return list(releases)
    return [release if (release["namespace"], release["name"]) == key else dict(release, wave=1)
            for release in releases]


def _namespace(name, labels):
    metadata = dict({"name": str(name)}, **({"labels": dict(labels)} if labels else {}))
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": metadata}


def in_place(desired, live):
    """True when ``live`` holds every field ``desired`` sets (a Secret's stringData as its data)."""
    if live is None:
        return False
    desired = dict(desired)
    string_data = desired.pop("stringData", None)
    if string_data:
        encoded = dict((k, base64.b64encode(str(v).encode("utf-8")).decode("ascii")) for k, v in string_data.items())
        desired["data"] = dict(desired.get("data") or {}, **encoded)
    # The API server omits empty fields (omitempty); a merge patch replaces a list whole (fleet/diffs.py).
    return holds(live, desired)


def available(deployment):
    conditions = (deployment.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Available" and c.get("status") == "True" for c in conditions)


def release_record_selectors(names):
    """Label selectors of Helm's storage Secrets for the latest revision of each named release.

    Helm labels each revision's Secret with ``owner=helm``, the release
    ``name`` and its ``status``; superseded revisions are history. A read with
    these selectors (in the releases' namespace) gives ``release_records``
    what it needs and nothing of the history.
    """
    names = list(dict.fromkeys(str(name) for name in names))
    return ["owner=helm", "status!=superseded", "name in (%s)" % ",".join(names)]


def release_records(releases):
    """``{(namespace, name): (record, user values)}`` of each release's latest revision, as ``helm list -a`` shows it.

    ``releases`` are the revisions ``k8s_reads`` answers with
    ``helm_releases`` (module_utils/k8s/helm_storage.py). ``record`` has the
    ``status`` and ``chart`` (``<name>-<version>``) that
    ``helm_releases.decide`` reads.
    """
    latest = {}
    for release in releases:
        key = (release.get("namespace"), release.get("name"))
        if key not in latest or release.get("version", 0) > latest[key].get("version", 0):
            latest[key] = release
    return dict((key, ({"status": release.get("status", ""), "chart": release.get("chart", "")},
                       release.get("config") or {})) for key, release in latest.items())


def object_key(obj):
    """Which object it is: (API group, kind, namespace, name); the version does not make another object."""
    metadata = obj.get("metadata") or {}
    group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    return group, obj.get("kind"), metadata.get("namespace") or "", metadata.get("name")


def _index(objects):
    return dict((object_key(obj), obj) for obj in objects)


def _describe(obj):
    metadata = obj.get("metadata") or {}
    where = "%s/%s" % (metadata["namespace"], metadata.get("name")) if metadata.get("namespace") else metadata.get("name")
    return "%s %s" % (obj.get("kind"), where)
