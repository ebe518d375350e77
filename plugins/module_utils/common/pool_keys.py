# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The keys each builder accepts, and the values of the keys that take a choice, in one place so that the sets stay in step.

Anything outside these sets is refused, so a typo in the inventory fails
instead of silently producing a runner without a GPU.
"""

from __future__ import annotations

# What a pool's or scale set's ``state`` may be.
ENTRY_STATES = ("present", "absent")
# A scale set's ``container_mode``: where its jobs run (arc_runners/runner_template.py).
ARC_CONTAINER_MODES = ("none", "dind", "kubernetes")

# What gpu_pod_patch reads.
GPU_REQUEST_KEYS = frozenset(
    (
        "gpu_class",
        "gpus",
        "mig_profile",
        "gpu_access",
        "gpu_allocation",
        "node_selector",
        "tolerations",
        "runtime_class",
        "privileged",
    )
)
# Keys of a pool or scale set that were renamed, with their names now: refused
# with an error that names the new key (``lane`` is the canary's word only).
RENAMED_POOL_KEYS = {"lane": "gpu_access"}
POD_PATCH_KEYS = GPU_REQUEST_KEYS | frozenset(("container",))

# The gitlab_runner role's variables a pool inherits when it does not set the key itself.
GITLAB_POOL_DEFAULTS = {
    "namespace": "gitlab_runner_namespace",
    "gitlab_url": "gitlab_runner_gitlab_url",
    "concurrent": "gitlab_runner_concurrent",
}

# A GitLab runner pool (role gitlab_runner). Secrets are accepted, never rendered.
GITLAB_POOL_KEYS = GPU_REQUEST_KEYS | frozenset(
    (
        "name",
        "gitlab_url",
        "token",
        "concurrent",
        "namespace",
        "image",
        "helper_image",
        "service_account",
        "cpu_request",
        "cpu_limit",
        "memory_request",
        "memory_limit",
        "hpa",
        "resources",
        "extra_config",
        "state",
        "tags",
        "gitlab_group",
        "gitlab_project",
        "share_gpu_nodes",
    )
)
GITLAB_SECRET_KEYS = frozenset(("token",))
# The keys of a GitLab pool's autoscaler (hpa) and of its manager's resources.
GITLAB_HPA_KEYS = ("min_replicas", "max_replicas", "target_cpu_utilization")
GITLAB_RESOURCE_KEYS = ("requests", "limits")

# An ARC runner scale set (role arc_runners). Secrets are accepted, never rendered.
ARC_SCALE_SET_KEYS = GPU_REQUEST_KEYS | frozenset(
    (
        "name",
        "namespace",
        "state",
        "github_config_url",
        "github_config_secret",
        "github_token",
        "github_app_id",
        "github_app_installation_id",
        "github_app_private_key",
        "runner_group",
        "labels",
        "min_runners",
        "max_runners",
        "container_mode",
        "work_volume_claim",
        "runner_image",
    )
)
ARC_SECRET_KEYS = frozenset(("github_token", "github_app_private_key"))

# Keys that gpu_pod_patch ignores because a pool or scale set handed to it
# whole carries them for the roles' own use.
POOL_KEYS_OWNED_BY_CALLERS = (GITLAB_POOL_KEYS | ARC_SCALE_SET_KEYS) - POD_PATCH_KEYS
