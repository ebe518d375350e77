# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gitlab_runner role's read-back: does the cluster hold what the plan released?

After the releases, the role reads the ConfigMaps the chart rendered and the
runner manager Deployments (waited for until Available). A release is right
when its ConfigMap holds, byte for byte, the config.toml the plan rendered:
the chart passes ``runners.config`` through Helm's ``tpl``, so anything in it
taken for a template, or lost on the way, shows here. Every present pool
needs its manager. All problems are returned at once; ``[]`` means verified.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.k8s.objects import metadata
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    child,
    object_list,
    reject_unknown_keys,
    require_mapping,
)

CONFIG_KEY = "config.template.toml"
INPUT_KEYS = frozenset(("releases", "configmaps", "managers"))


def gitlab_runner_readback(spec, path="readback"):
    """Problems of the read-back (see the module docstring); ``[]`` when every release holds its config.

    ``spec`` holds ``releases`` (the plan's releases: ``name``, ``namespace``,
    ``values.runners.config``), ``configmaps`` and ``managers`` (ConfigMap
    and Deployment objects as ``k8s_reads`` returns them).
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    releases = object_list(spec.get("releases"), child(path, "releases"))
    configmaps = _by_name(object_list(spec.get("configmaps"), child(path, "configmaps")))
    managers = object_list(spec.get("managers"), child(path, "managers"))
    problems = []
    for release in releases:
        where = "%s/%s" % (release["namespace"], release["name"])
        found = configmaps.get((release["namespace"], release["name"]))
        if found is None:
            problems.append("ConfigMap %s is missing: the release rendered no config.toml" % where)
        elif (found.get("data") or {}).get(CONFIG_KEY) != release["values"]["runners"]["config"]:
            problems.append("ConfigMap %s does not hold the config.toml rendered for pool %s"
                            % (where, release["values"]["runners"]["name"]))
    if len(managers) != len(releases):
        problems.append("expected one runner manager Deployment per present pool (%s); found %s" % (
            ", ".join(release["name"] for release in releases) or "none",
            ", ".join(sorted(metadata(m).get("name", "?") for m in managers)) or "none"))
    return problems


def _by_name(objects):
    return dict(((metadata(o).get("namespace"), metadata(o).get("name")), o) for o in objects)
