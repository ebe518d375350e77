# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The runners the GitLab STAND-IN starts with: those of inventories/local's pools, as GitLab would hold them.

A pool with a `glrt-` token in inventories/local stands for a runner a GitLab
admin made in the UI before pasting its token into the inventory. GitLab
keeps that runner's tags and run_untagged (a `glrt-` token carries neither:
config.toml has none), so the stand-in must be told them to route jobs as
GitLab would. They are derived as the gitlab_runner role creates a runner for
a pool without a token (roles/gitlab_runner/tasks/create_runners.yml):
description = the pool's name, tag_list = its tags, run_untagged only when it
has no tags, not paused. A pool's own `run_untagged` wins here, for tests
that want one; the role has no such pool key (plugins/module_utils/common/pool_keys.py).
"""
from __future__ import annotations

import json
from pathlib import Path

import yaml

from .gitlab_state import TOKEN_PREFIX
from .layout import REPO_ROOT

INVENTORY_VARS = REPO_ROOT / "inventories" / "local" / "group_vars" / "all" / "gitlab_runner.yml"


def seed_runners(pools: list[dict]) -> list[dict]:
    """The stand-in's --runners entries for these pools: {token, description, tag_list, run_untagged, paused}."""
    seeds = []
    for pool in pools:
        token = pool.get("token")
        # No token: the role creates the runner through the API. A templated one is not known here.
        if not isinstance(token, str) or not token.startswith(TOKEN_PREFIX):
            continue
        tags = [str(tag) for tag in pool.get("tags") or []]
        seeds.append({"token": token, "description": pool["name"], "tag_list": tags,
                      "run_untagged": bool(pool.get("run_untagged", not tags)), "paused": False})
    return seeds


def write_seed(path: Path, vars_file: Path = INVENTORY_VARS) -> Path:
    """Write the seed of `vars_file`'s gitlab_runner_pools to `path` (tokens inside: owner-only)."""
    pools = (yaml.safe_load(vars_file.read_text()) or {}).get("gitlab_runner_pools") or []
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch(mode=0o600)
    path.write_text(json.dumps(seed_runners(pools), indent=2) + "\n")
    return path
