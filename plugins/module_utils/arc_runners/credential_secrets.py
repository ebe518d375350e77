# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Secrets holding the arc_runners scale sets' GitHub credentials, for one kubernetes.core.k8s call.

The plan (arc_runners/plan.py) names each Secret the role keeps, without its
credentials; here each gets the keys the gha-runner-scale-set chart reads from
its githubConfigSecret: ``github_token``, or the GitHub App's three keys. The
result goes straight to a no_log task.
"""

from __future__ import annotations

import base64

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.preflight import GITHUB_APP_KEYS
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError, require_mapping


def _encoded(value):
    return base64.b64encode(str(value).encode()).decode()


def arc_runners_credential_secrets(value):
    """Secret definitions from ``secrets`` (the plan's) and ``scale_sets`` (as the inventory wrote them)."""
    require_mapping(value, "arc_runners_credential_secrets")
    raw = {entry.get("name"): entry for entry in value.get("scale_sets") or []}
    definitions = []
    for secret in value.get("secrets") or []:
        entry = raw.get(secret["scale_set"]) or {}
        if entry.get("github_token"):
            data = {"github_token": _encoded(entry["github_token"])}
        elif all(entry.get(key) not in (None, "") for key in GITHUB_APP_KEYS):
            data = {key: _encoded(entry[key]) for key in GITHUB_APP_KEYS}
        else:
            # Preflight refuses a scale set without one kind of credentials.
            raise ValidationError("arc_runners_scale_sets[name=%s]" % secret["scale_set"], "no credentials for its Secret")
        definitions.append({"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                            "metadata": {"name": secret["name"], "namespace": secret["namespace"],
                                         "labels": secret["labels"]},
                            "data": data})
    return definitions
