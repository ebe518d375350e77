# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Secrets holding the gitlab_runner pools' runner tokens, for one kubernetes.core.k8s call.

The plan (gitlab_runner/plan.py) names each Secret without its token; here
each gets its token: the one the role created in GitLab for the pool (then the
Secret is annotated with that GitLab's URL, so a rerun and teardown find it),
else the inventory's. The result goes straight to a no_log task.
"""

from __future__ import annotations

import base64

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.created_runner_tokens import (
    CREATED_IN_ANNOTATION,
    TOKEN_KEY,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError, require_mapping

# The chart mounts both keys of runners.secret; registration tokens are refused
# in preflight, so that key stays empty.
REGISTRATION_TOKEN_KEY = "runner-registration-token"


def gitlab_runner_token_secrets(value):
    """Secret definitions from ``secrets`` (the plan's), ``tokens`` and ``created`` ({pool: token} each)."""
    require_mapping(value, "gitlab_runner_token_secrets")
    tokens = value.get("tokens") or {}
    created = value.get("created") or {}
    definitions = []
    for secret in value.get("secrets") or []:
        pool = secret["pool"]
        token = created.get(pool) or tokens.get(pool)
        if not token:
            # Preflight refuses a present pool without a token unless the role creates one.
            raise ValidationError("gitlab_runner_pools[name=%s].token" % pool, "no token for the pool's Secret")
        annotations = {CREATED_IN_ANNOTATION: secret["gitlab_url"]} if pool in created else {}
        definitions.append({
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "Opaque",
            "metadata": {"name": secret["name"], "namespace": secret["namespace"], "labels": secret["labels"],
                         "annotations": annotations},
            "data": {TOKEN_KEY: base64.b64encode(token.encode()).decode(), REGISTRATION_TOKEN_KEY: ""},
        })
    return definitions
