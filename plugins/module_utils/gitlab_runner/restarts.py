# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The runner managers the gitlab_runner role restarts: those whose token Secret the objects' apply changed.

A manager reads its token once, at start, and the chart's checksum annotation
cannot see a Secret it does not render, so the role rolls the manager of each
token Secret that the apply (``kubernetes.core.k8s``, registered as
``__converge_applied`` in roles/converge) changed. Not restarted: a Secret the apply
created (its manager starts after it and reads it then), an unchanged one,
other kinds, and Secrets the plan does not name (the converge applies every
role's objects in one call). The plan's ``secrets`` name each token Secret
with its namespace and pool, so the Deployment is the pool's release name
(the chart names its objects after the release), not a suffix stripped off.

The register has one of two shapes: one object applied, the result itself
(``changed``, ``method``, ``result``: the object); several, ``result.results``
with one such entry each. A skipped apply has neither: nothing restarts.

Only names and the Secret's resourceVersion leave here, never its data; the
apply hides ``data``, and errors never show what they received.
"""

from __future__ import annotations

from collections.abc import Mapping

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import release_name
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    child,
    item,
    object_list,
    reject_unknown_keys,
    require_mapping,
    required_str,
    type_name,
)

INPUT_KEYS = frozenset(("applied", "secrets"))


def gitlab_runner_restarts(spec, path="restarts"):
    """One ``{namespace, deployment, resource_version}`` per token Secret the apply changed (see the module docstring).

    ``spec`` holds ``applied`` (the apply's register; missing, ``None`` or
    ``{}`` when it did not run) and ``secrets`` (the plan's: ``name``,
    ``namespace``, ``pool``). In the order of the apply's results.
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    secrets_path = child(path, "secrets")
    deployments = {}
    for index, secret in enumerate(object_list(spec.get("secrets"), secrets_path)):
        secret_path = item(secrets_path, index)
        key = (required_str(secret, "namespace", secret_path), required_str(secret, "name", secret_path))
        deployments[key] = release_name(required_str(secret, "pool", secret_path))
    restarts = []
    for entry, entry_path in _entries(spec.get("applied"), child(path, "applied")):
        if not entry.get("changed") or entry.get("method") == "create":
            continue
        obj = _mapping(entry.get("result"), child(entry_path, "result"))
        if obj.get("kind") != "Secret":
            continue
        metadata = _mapping(obj.get("metadata"), child(child(entry_path, "result"), "metadata"))
        deployment = deployments.get((metadata.get("namespace"), metadata.get("name")))
        if deployment is None:
            continue
        version = metadata.get("resourceVersion")
        if not isinstance(version, str) or not version:
            raise ValidationError(child(child(child(entry_path, "result"), "metadata"), "resourceVersion"),
                                  "a changed Secret must have one, not %s" % type_name(version))
        restarts.append({"namespace": str(metadata["namespace"]), "deployment": deployment,
                         "resource_version": str(version)})
    return restarts


def _entries(applied, path):
    """The apply's per-object results with their paths: none, the register itself, or its ``result.results``."""
    applied = _mapping(applied, path)
    result = applied.get("result")
    if isinstance(result, Mapping) and "results" in result:
        results_path = child(child(path, "result"), "results")
        results = result["results"]
        if not isinstance(results, (list, tuple)):
            raise ValidationError(results_path, "must be a list, not %s" % type_name(results))
        return [(_mapping(entry, item(results_path, index)), item(results_path, index))
                for index, entry in enumerate(results)]
    return [(applied, path)] if applied else []


def _mapping(value, path):
    """``value`` (None: {}) as a mapping; unlike require_mapping the error never shows it (it may be a Secret)."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValidationError(path, "must be a mapping, not %s" % type_name(value))
    return value
