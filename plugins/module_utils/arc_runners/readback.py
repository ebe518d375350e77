# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The arc_runners role's read-back: does each AutoscalingRunnerSet carry the pod template the plan rendered?

The gha-runner-scale-set chart turns a release's values into one
AutoscalingRunnerSet. A scale set is right when exactly one runner set of
its name is in its namespace, names the credentials Secret the plan chose
(``githubConfigSecret``) and carries the planned node selector, tolerations,
runtime class and runner container resources: what places and sizes its GPU
jobs. A Secret the user made and a scale set names (``github_config_secret``)
must exist: the plan reads each under ``named_secret_key``. All problems are
returned at once; ``[]`` means verified.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.k8s.objects import metadata
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    child,
    object_list,
    reject_unknown_keys,
    require_mapping,
)

INPUT_KEYS = frozenset(("by_scale_set", "runner_sets", "answers"))
# The pod template fields compared, each with the API server's omitted value.
POD_FIELDS = (("nodeSelector", {}), ("tolerations", []), ("runtimeClassName", ""))


def arc_runners_readback(spec, path="readback"):
    """Problems of the read-back (see the module docstring); ``[]`` when every scale set is verified.

    ``spec`` holds ``by_scale_set`` (the plan's: per present scale set its
    ``namespace``, ``secret``, ``owns_secret`` and ``template``),
    ``runner_sets`` (AutoscalingRunnerSet objects as ``k8s_reads`` returns
    them) and ``answers`` (the role's k8s_reads answers verification reads
    from, which hold the Secrets the scale sets name).
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    planned = require_mapping(spec.get("by_scale_set") or {}, child(path, "by_scale_set"))
    runner_sets = object_list(spec.get("runner_sets"), child(path, "runner_sets"))
    answers = require_mapping(spec.get("answers") or {}, child(path, "answers"))
    problems = [
        "The Secret %s/%s that scale set %s names in github_config_secret does not exist; its listener cannot "
        "register with GitHub until it does." % (scale_set["namespace"], scale_set["secret"], name)
        for name, scale_set in planned.items()
        if not scale_set.get("owns_secret", True)
        and not (answers.get(named_secret_key(name)) or {}).get("resources")]
    for name, scale_set in planned.items():
        where = "%s/%s" % (scale_set["namespace"], name)
        found = [r for r in runner_sets if metadata(r).get("namespace") == scale_set["namespace"]
                 and metadata(r).get("name") == name]
        if len(found) != 1:
            problems.append("expected one AutoscalingRunnerSet %s; found %d" % (where, len(found)))
            continue
        live = found[0].get("spec") or {}
        if live.get("githubConfigSecret") != scale_set["secret"]:
            problems.append("AutoscalingRunnerSet %s names githubConfigSecret %s, not %s"
                            % (where, live.get("githubConfigSecret"), scale_set["secret"]))
        wanted_pod = (scale_set["template"].get("spec") or {})
        live_pod = ((live.get("template") or {}).get("spec") or {})
        differing = [field for field, omitted in POD_FIELDS
                     if live_pod.get(field, omitted) != wanted_pod.get(field, omitted)]
        if _runner(live_pod).get("resources", {}) != _runner(wanted_pod).get("resources", {}):
            differing.append("runner resources")
        if differing:
            problems.append("AutoscalingRunnerSet %s does not carry the pod template the role rendered: %s differ"
                            % (where, ", ".join(differing)))
    return problems


def named_secret_key(scale_set):
    """The key of the read of the Secret a scale set names (github_config_secret), among the role's reads."""
    return "named_secret/%s" % scale_set


def _runner(pod):
    return next((c for c in pod.get("containers") or [] if c.get("name") == "runner"), {})
