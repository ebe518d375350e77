# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Runners the gitlab_runner role creates in GitLab for pools without a token.

GitLab shows a new runner's authentication token once, in the answer to its
creation. The role keeps it only in the pool's Secret, annotated with the
GitLab URL it was created in; a rerun reads it back from there.
"""

from __future__ import annotations

import base64

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import CREATED_IN_ANNOTATION, POOL_LABEL
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

TOKEN_KEY = "runner-token"


def _stored_tokens(secrets):
    """{pool: token} from the Secrets of runners the role created earlier."""
    stored = {}
    for secret in secrets:
        metadata = secret.get("metadata") or {}
        if CREATED_IN_ANNOTATION not in (metadata.get("annotations") or {}):
            continue
        encoded = (secret.get("data") or {}).get(TOKEN_KEY)
        pool = (metadata.get("labels") or {}).get(POOL_LABEL)
        if pool and encoded:
            stored[pool] = base64.b64decode(encoded).decode()
    return stored


def created_runner_tokens(value):
    """{pool name: authentication token} for every pool whose runner the role creates.

    ``value`` holds ``pools`` (names), ``secrets`` (the pools' Secrets as
    kubernetes.core.k8s_info returns them) and ``created`` (the ``results`` of
    community.general.gitlab_runner run for each pool, with the loop variable
    ``_gitlab_runner_pool``), and ``check_mode``. A token GitLab just returned
    wins over a stored one. A pool with neither has a runner in GitLab whose
    token is lost to us: refused, naming the pool. In check mode nothing was
    created, so such pools get a placeholder that is never written.
    """
    tokens = _stored_tokens(value.get("secrets") or [])
    for result in value.get("created") or []:
        token = ((result.get("runner") or {}).get("token"))
        if token:
            tokens[result["_gitlab_runner_pool"]["name"]] = token
    lost = [name for name in value.get("pools") or [] if name not in tokens]
    if lost and not value.get("check_mode"):
        raise ValidationError(
            "gitlab_runner_pools[name=%s]" % lost[0],
            "a runner named %s already exists in GitLab, but its authentication token is not in the pool's Secret "
            "(GitLab shows it only when the runner is created). Delete that runner in GitLab and rerun, or give "
            "the pool its token" % lost[0])
    return {name: tokens.get(name, "glrt-check-mode-placeholder") for name in value.get("pools") or []}
