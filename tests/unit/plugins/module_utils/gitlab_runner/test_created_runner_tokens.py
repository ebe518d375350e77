# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""created_runner_tokens: which token each created runner's Secret gets.

Secrets are shaped as kubernetes.core.k8s_info returns them, creation results
as community.general.gitlab_runner returns them in a loop (the runner's
attributes, with the token only when GitLab created it now).
"""
import base64

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.created_runner_tokens import (
    CREATED_IN_ANNOTATION, POOL_LABEL, created_runner_tokens)
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError


def secret(pool, token, created=True):
    annotations = {CREATED_IN_ANNOTATION: "https://gitlab.example.com/"} if created else {}
    return {"metadata": {"name": f"gitlab-runner-{pool}-token", "labels": {POOL_LABEL: pool},
                         "annotations": annotations},
            "data": {"runner-token": base64.b64encode(token.encode()).decode()}}


def created(pool, token=None):
    runner = {"id": 7, "description": pool}
    if token:
        runner["token"] = token
    return {"_gitlab_runner_pool": {"name": pool}, "changed": bool(token), "runner": runner}


def test_a_new_runner_token_wins_and_a_stored_one_is_reused():
    tokens = created_runner_tokens({
        "pools": ["new", "kept", "rotated"],
        "secrets": [secret("kept", "glrt-kept"), secret("rotated", "glrt-old")],
        "created": [created("new", "glrt-new"), created("kept"), created("rotated", "glrt-fresh")],
    })
    assert tokens == {"new": "glrt-new", "kept": "glrt-kept", "rotated": "glrt-fresh"}


def test_a_secret_the_role_did_not_create_is_not_a_created_runners_token():
    with pytest.raises(ValidationError) as refused:
        created_runner_tokens({"pools": ["mine"], "secrets": [secret("mine", "glrt-by-hand", created=False)],
                               "created": [created("mine")]})
    assert "gitlab_runner_pools[name=mine]" in str(refused.value)
    assert "already exists in GitLab" in str(refused.value)
    assert "glrt-by-hand" not in str(refused.value)


def test_check_mode_gets_placeholders_that_are_never_real_tokens():
    tokens = created_runner_tokens({"pools": ["new"], "secrets": [], "created": [created("new")], "check_mode": True})
    assert tokens == {"new": "glrt-check-mode-placeholder"}


def test_no_pools_no_tokens():
    assert created_runner_tokens({"pools": [], "secrets": [], "created": []}) == {}
