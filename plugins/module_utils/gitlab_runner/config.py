# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""config.toml for one GitLab runner pool (kubernetes executor).

The text is what the gitlab-runner chart takes as ``runners.config``. It
holds no ``url`` or ``token``: the chart adds them from ``runners.secret``.
Placement uses the executor's native keys (node_selector, node_tolerations,
runtime_class_name); the ``pod_spec`` patches carry only what those keys
cannot say (GPU resources, the /dev/dri mount, the CPU-only affinity, which
a CPU pool drops with ``share_gpu_nodes``).
GitLab applies pod_spec only with FF_USE_ADVANCED_POD_SPEC_CONFIGURATION on,
so the flag is always set. FF_USE_POD_ACTIVE_DEADLINE_SECONDS is written on
too (on by default in GitLab Runner 19.4, pinned here): it gives every job pod
an activeDeadlineSeconds of the job's timeout plus one second, so a job pod
whose runner manager was killed (a node lost, a grace period run out) is
stopped by the kubelet at the job's timeout and frees its GPU, instead of
running with no owner (docs/reliability.md).

Privilege is scoped to the build container with
``[runners.kubernetes.build_container_security_context]``. The executor's
own ``privileged`` key is never written: GitLab Runner uses it as the
fallback of every container's security context (init-permissions, build,
helper and services), so it would make the whole job pod privileged.
"""

from __future__ import annotations

import re

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import merged_classes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.request import cuda_runtime_class, resolve_gpu_request
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import claim_template_name
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.pod_patch import container_patch, pod_claims, pod_volumes
from ansible_collections.gpuci.runners.plugins.module_utils.common.pool_keys import (
    ENTRY_STATES,
    GITLAB_POOL_KEYS,
    GITLAB_SECRET_KEYS,
    RENAMED_POOL_KEYS,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.merging import deep_merge
from ansible_collections.gpuci.runners.plugins.module_utils.common.rendering import to_json, to_toml
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.scheduling import cpu_only_affinity
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    check_quantity,
    check_request_within_limit,
    child,
    optional_bool,
    optional_choice,
    optional_int,
    optional_mapping,
    optional_secret,
    optional_str,
    optional_str_list,
    reject_unknown_keys,
    rendered_present_entries,
    require_mapping,
    required_str,
)

BUILD_CONTAINER = "build"
GPU_PATCH_NAME = "gpuci-gpu"
CPU_ONLY_PATCH_NAME = "gpuci-cpu-only"
ADVANCED_POD_SPEC_FLAG = "FF_USE_ADVANCED_POD_SPEC_CONFIGURATION"
POD_DEADLINE_FLAG = "FF_USE_POD_ACTIVE_DEADLINE_SECONDS"
# Flags a pool's extra_config may not turn off, and why.
REQUIRED_FLAGS = {
    ADVANCED_POD_SPEC_FLAG: "without it GitLab ignores the pod_spec patches that request the GPU",
    POD_DEADLINE_FLAG: "without it a job pod whose runner manager is lost runs on, holding its GPU, "
                       "past the job's timeout",
}
# The chart renders runners.config through Helm's tpl, so this resolves to
# the release namespace, which is also what the chart's own default does.
RELEASE_NAMESPACE = "{{ .Release.Namespace }}"
DEFAULT_IMAGES = {
    "cuda": "nvidia/cuda:12.4.1-base-ubuntu22.04",
    "dri": "ubuntu:24.04",
    None: "alpine:3.20",  # CPU pools
}
BUILD_SECURITY_CONTEXT = "build_container_security_context"
# The grace period the executor gives a job pod it deletes when the job has
# ended or was cancelled. The containers are idle shells by then, and the
# build container's shell (PID 1) ignores SIGTERM, so the pod always used the
# whole of Kubernetes' default 30 s, holding its GPU. Measured on the testbed
# (tests/integration/test_job_faults.py): a pod went 30 s after its job's end
# with the default, seconds with this. extra_config may set its own.
JOB_POD_CLEANUP_GRACE_S = 5
# Pool keys that map one to one onto [runners.kubernetes] keys.
_NATIVE_STRINGS = ("helper_image", "service_account")
_NATIVE_QUANTITIES = ("cpu_request", "cpu_limit", "memory_request", "memory_limit")
# [runners.kubernetes] keys GitLab Runner reads as Kubernetes quantities (the build, helper and service containers').
_QUANTITY_KEY = re.compile(r"(?:helper_|service_)?(?:cpu|memory|ephemeral_storage)_(?:request|limit)"
                           r"(?:_overwrite_max_allowed)?\Z")


def gitlab_runner_config(pool, gpu_classes=None, path="pool", runtime_class=None):
    """Return config.toml text for one runner pool (see docs/filters.md).

    ``runtime_class`` is the RuntimeClass of cuda job pods whose pool names
    none (None: the GPU Operator's default, ``""``: none).
    """
    return to_toml(gitlab_runner_document(pool, gpu_classes, path, runtime_class))


def pool_configs(pools, gpu_classes=None, runtime_class=None, key="gitlab_runner_pools"):
    """config.toml of each pool to be present, and the problem of each that cannot render; both by index in ``pools``.

    A problem names the pool as the inventory does (``key[name=x].gpus``). The gitlab_runner plan
    renders each pool once here and takes the text into the pool's release.
    """
    return rendered_present_entries(
        pools, key, lambda pool, path: gitlab_runner_config(pool, gpu_classes, path, runtime_class))


def gitlab_runner_document(pool, gpu_classes=None, path="pool", runtime_class=None):
    """The same configuration as data: ``{"runners": [runner_table]}``."""
    require_mapping(pool, path)
    reject_unknown_keys(pool, GITLAB_POOL_KEYS, path, RENAMED_POOL_KEYS)
    _check_caller_keys(pool, path)
    request = resolve_gpu_request(
        pool, merged_classes(gpu_classes), path, cuda_runtime_class(runtime_class, "runtime_class")
    )

    runner = {
        "name": required_str(pool, "name", path),
        "executor": "kubernetes",
        "kubernetes": _kubernetes_table(pool, request, path),
        "feature_flags": {flag: True for flag in REQUIRED_FLAGS},
    }
    extra = optional_mapping(pool, "extra_config", path)
    _check_extra_config(extra, child(path, "extra_config"))
    _check_requests_within_limits(pool, extra, path)
    return {"runners": [deep_merge(runner, extra)]}


def _kubernetes_table(pool, request, path):
    table = {
        "namespace": optional_str(pool, "namespace", path, default=RELEASE_NAMESPACE),
        "image": optional_str(pool, "image", path, default=DEFAULT_IMAGES[request.gpu_access]),
        "cleanup_grace_period_seconds": JOB_POD_CLEANUP_GRACE_S,
    }
    patches = _pod_spec_patches(request, claim_template_name(required_str(pool, "name", path)),
                                _shares_gpu_nodes(pool, request, path))
    if patches:
        table["pod_spec"] = patches
    if request.privileged:
        table[BUILD_SECURITY_CONTEXT] = {"privileged": True}
    for key in _NATIVE_STRINGS:
        value = optional_str(pool, key, path)
        if value is not None:
            table[key] = value
    for key in _NATIVE_QUANTITIES:
        value = check_quantity(pool, key, path)
        if value is not None:
            table[key] = value
    if request.node_selector:
        table["node_selector"] = dict(request.node_selector)
    if request.tolerations:
        table["node_tolerations"] = _toleration_map(request.tolerations, child(path, "tolerations"))
    if request.runtime_class:
        table["runtime_class_name"] = request.runtime_class
    return table


def _shares_gpu_nodes(pool, request, path):
    """A CPU pool's ``share_gpu_nodes``: its jobs may run on GPU nodes (no CPU-only affinity); refused on a GPU pool."""
    shares = optional_bool(pool, "share_gpu_nodes", path, default=False)
    if shares and request.gpu_class is not None:
        raise ValidationError(child(path, "share_gpu_nodes"), "is for pools without gpu_class: a GPU pool's jobs run "
                              "on its class's nodes already", shares)
    return shares


def _pod_spec_patches(request, claim_template, share_gpu_nodes=False):
    """GitLab has no keys of its own for these: the GPU container's share, volumes, and DRA's claim.

    Under DRA the pod names the pool's ResourceClaimTemplate and only the
    build container names the claim, so the helper gets no device.
    """
    if request.gpu_class is None:
        # Off GPU nodes unless the pool shares them (a cluster of GPU nodes only, a negative control beside a GPU).
        return [] if share_gpu_nodes else [_pod_spec_entry(CPU_ONLY_PATCH_NAME, {"affinity": cpu_only_affinity()})]
    patch = pod_claims(request, claim_template)
    # build_container_security_context already makes the build container
    # privileged; one place for it, and it works without the feature flag.
    patch["containers"] = [container_patch(request._replace(privileged=False), BUILD_CONTAINER)]
    volumes = pod_volumes(request)
    if volumes:
        patch["volumes"] = volumes
    return [_pod_spec_entry(GPU_PATCH_NAME, patch)]


def _pod_spec_entry(name, patch):
    return {"name": name, "patch": to_json(patch), "patch_type": "strategic"}


def _toleration_map(tolerations, path):
    """GitLab's map form: ``"key=value" = "Effect"`` (Equal), ``"key" = "Effect"`` (Exists).

    The map holds one effect per key; two tolerations that differ only in
    effect cannot both be expressed, so they are refused.
    """
    result = {}
    for toleration in tolerations:
        if toleration["operator"] == "Equal":
            name = "%s=%s" % (toleration["key"], toleration["value"])
        else:
            name = toleration["key"]
        effect = toleration.get("effect", "")  # "" tolerates every effect
        if result.get(name, effect) != effect:
            raise ValidationError(
                path, "GitLab's node_tolerations allows one effect per key; %s has two" % name, toleration
            )
        result[name] = effect
    return result


def _check_caller_keys(pool, path):
    """Type checks for the keys the gitlab_runner role reads (not rendered here)."""
    optional_str(pool, "gitlab_url", path)
    for key in sorted(GITLAB_SECRET_KEYS):
        optional_secret(pool, key, path)
    optional_int(pool, "concurrent", path, minimum=1)
    optional_choice(pool, "state", path, ENTRY_STATES)
    optional_str_list(pool, "tags", path)
    optional_mapping(pool, "hpa", path)
    optional_mapping(pool, "resources", path)


def _check_extra_config(extra, path):
    """extra_config may add to the runner table, but not rename the runner or widen privilege to the whole pod."""
    if "name" in extra:
        # The gitlab_runner role registers the pool's name with the chart's
        # runners.name (--name); a name here would be dropped silently.
        raise ValidationError(
            child(path, "name"), "the runner is registered under the pool's name; set name instead", extra["name"]
        )
    kubernetes = extra.get("kubernetes")
    if isinstance(kubernetes, dict) and "privileged" in kubernetes:
        raise ValidationError(
            child(child(path, "kubernetes"), "privileged"),
            "would make every container of the job pod privileged (init-permissions, helper, services); "
            "set the pool's privileged: true, which privileges only the build container",
            kubernetes["privileged"],
        )
    flags = extra.get("feature_flags")
    if flags is not None and not isinstance(flags, dict):
        raise ValidationError(child(path, "feature_flags"), "must be a mapping of feature flag names to true or false",
                              flags)
    for flag, reason in REQUIRED_FLAGS.items():
        if flags and flag in flags and flags[flag] is not True:
            raise ValidationError(child(child(path, "feature_flags"), flag), "must stay true: " + reason, flags[flag])
    if isinstance(kubernetes, dict):
        # GitLab Runner parses these when it makes each job pod: a bad one fails every job, not the converge.
        for key in sorted(key for key in kubernetes if isinstance(key, str) and _QUANTITY_KEY.match(key)):
            check_quantity(kubernetes, key, child(path, "kubernetes"))
    _check_toml_value(extra, path)


def _check_requests_within_limits(pool, extra, path):
    """Each job container's request within its limit, as written after extra_config's kubernetes keys win."""
    kubernetes = extra.get("kubernetes") if isinstance(extra.get("kubernetes"), dict) else {}
    extra_path = child(child(path, "extra_config"), "kubernetes")

    def written(key):
        source, where = (kubernetes, extra_path) if key in kubernetes else (pool, path)
        return check_quantity(source, key, where), child(where, key)

    for container in ("", "helper_", "service_"):
        for resource in ("cpu", "memory", "ephemeral_storage"):
            check_request_within_limit(*written(container + resource + "_request"),
                                       *written(container + resource + "_limit"))


def _check_toml_value(value, path):
    """TOML has no null, and its keys are strings: say where a value breaks that."""
    if isinstance(value, dict):
        for key, element in value.items():
            if not isinstance(key, str):
                raise ValidationError(path, "TOML keys must be strings", key)
            _check_toml_value(element, child(path, key))
    elif isinstance(value, list):
        for index, element in enumerate(value):
            _check_toml_value(element, "%s[%d]" % (path, index))
    elif not isinstance(value, (str, int, float, bool)):
        raise ValidationError(path, "cannot be written to TOML", value)
