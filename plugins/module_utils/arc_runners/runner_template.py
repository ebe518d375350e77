# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The ``template`` value of the gha-runner-scale-set chart for one scale set.

With ``container_mode`` none or dind the job runs in the ``runner``
container, so the GPU goes there. In kubernetes mode the runner starts a
separate job pod through the container hooks; the GPU belongs to that pod's
``$job`` container, described by a hook template (a YAML file from a
ConfigMap named by ACTIONS_RUNNER_CONTAINER_HOOK_TEMPLATE). The runner pod
still gets the class's node selector and tolerations: with a
ReadWriteOnce work volume the hook puts the job pod on the runner's node.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import merged_classes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.request import cuda_runtime_class, resolve_gpu_request
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import claim_template_name
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.pod_patch import container_patch, placement, pod_claims, pod_volumes
from ansible_collections.gpuci.runners.plugins.module_utils.common.pool_keys import (
    ARC_CONTAINER_MODES,
    ARC_SCALE_SET_KEYS,
    ARC_SECRET_KEYS,
    ENTRY_STATES,
    RENAMED_POOL_KEYS,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.release_names import ARC_SCALE_SET_NAME_MAX, is_dns_label
from ansible_collections.gpuci.runners.plugins.module_utils.common.rendering import to_yaml
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.scheduling import cpu_only_affinity
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    check_quantity,
    check_str_list,
    child,
    optional_choice,
    optional_int,
    optional_secret,
    optional_str,
    optional_str_list,
    quantity_value,
    reject_unknown_keys,
    rendered_present_entries,
    require_mapping,
    required_str,
    type_name,
)

RUNNER_CONTAINER = "runner"
JOB_CONTAINER = "$job"
# Pinned rather than `latest`; GitHub stops serving runners that fall too
# far behind, so bump it with the chart (or set runner_image per scale set).
DEFAULT_RUNNER_IMAGE = "ghcr.io/actions/actions-runner:2.329.0"
RUNNER_COMMAND = ["/home/runner/run.sh"]
HOOK_TEMPLATE_ENV = "ACTIONS_RUNNER_CONTAINER_HOOK_TEMPLATE"
HOOK_TEMPLATE_DIR = "/home/runner/pod-templates"
HOOK_TEMPLATE_FILE = "job-template.yaml"
HOOK_TEMPLATE_VOLUME = "hook-template"
WORK_VOLUME_CLAIM_KEYS = frozenset(("storage_class", "size", "access_modes"))


def scale_set_templates(scale_sets, gpu_classes=None, runtime_class=None, key="arc_runners_scale_sets"):
    """The pod template of each scale set to be present, and the problem of each that cannot render; by index.

    A problem names the scale set as the inventory does (``key[name=x].gpus``). The arc_runners
    plan renders each scale set once here and takes the template into its release.
    """
    return rendered_present_entries(
        scale_sets, key, lambda scale_set, path: arc_runner_template(scale_set, gpu_classes, path, runtime_class))


def arc_runner_template(scale_set, gpu_classes=None, path="scale_set", runtime_class=None):
    """Return ``{"template": ..., "hook_template": None | {...}}`` (see docs/filters.md).

    ``runtime_class`` is the RuntimeClass of cuda GPU pods whose scale set
    names none (None: the GPU Operator's default, ``""``: none).
    """
    require_mapping(scale_set, path)
    reject_unknown_keys(scale_set, ARC_SCALE_SET_KEYS, path, RENAMED_POOL_KEYS)
    name = _check_name(scale_set, path)
    _check_caller_keys(scale_set, path)
    mode = optional_choice(scale_set, "container_mode", path, ARC_CONTAINER_MODES, "none")
    request = resolve_gpu_request(
        scale_set, merged_classes(gpu_classes), path, cuda_runtime_class(runtime_class, "runtime_class")
    )
    runner = {
        "name": RUNNER_CONTAINER,
        "image": optional_str(scale_set, "runner_image", path, default=DEFAULT_RUNNER_IMAGE),
        "command": list(RUNNER_COMMAND),
    }
    if mode == "kubernetes":
        return _kubernetes_mode(name, runner, request)
    return {"template": _runner_pod(name, runner, request), "hook_template": None}


def _runner_pod(name, runner, request):
    """The job runs in the runner container: it gets the GPU itself (a DRA claim: only it names the claim)."""
    runner.update(container_patch(request, RUNNER_CONTAINER))
    spec = _placement_with_affinity(request)
    spec.update(pod_claims(request, claim_template_name(name)))
    spec["containers"] = [runner]
    volumes = pod_volumes(request)
    if volumes:
        spec["volumes"] = volumes
    return {"spec": spec}


def _kubernetes_mode(name, runner, request):
    configmap_name = "%s-hook-template" % name
    env_path = "%s/%s" % (HOOK_TEMPLATE_DIR, HOOK_TEMPLATE_FILE)
    runner["env"] = [{"name": HOOK_TEMPLATE_ENV, "value": env_path}]
    runner["volumeMounts"] = [{"name": HOOK_TEMPLATE_VOLUME, "mountPath": HOOK_TEMPLATE_DIR, "readOnly": True}]
    runner_spec = {"containers": [runner], "volumes": [{"name": HOOK_TEMPLATE_VOLUME, "configMap": {"name": configmap_name}}]}
    # Same nodes as the job pod, but no GPU and no GPU runtime for the runner.
    runner_placement = _placement_with_affinity(request)
    runner_placement.pop("runtimeClassName", None)
    runner_spec.update(runner_placement)

    # The GPU, a DRA claim included, is the job pod's; the runner pod claims nothing.
    job_spec = _placement_with_affinity(request)
    job_spec.update(pod_claims(request, claim_template_name(name)))
    job_spec["containers"] = [container_patch(request, JOB_CONTAINER)]
    volumes = pod_volumes(request)
    if volumes:
        job_spec["volumes"] = volumes
    return {
        "template": {"spec": runner_spec},
        "hook_template": {
            "configmap_name": configmap_name,
            "data": {HOOK_TEMPLATE_FILE: to_yaml({"spec": job_spec})},
            "env_path": env_path,
        },
    }


def _placement_with_affinity(request):
    """Placement keys; CPU scale sets are also kept off GPU and /dev/dri nodes."""
    spec = placement(request)
    if request.gpu_class is None:
        spec["affinity"] = cpu_only_affinity()
    return spec


def _check_name(scale_set, path):
    name = required_str(scale_set, "name", path)
    if not is_dns_label(name, ARC_SCALE_SET_NAME_MAX):
        raise ValidationError(
            child(path, "name"),
            "must be a DNS label of at most %d characters (a-z, 0-9, -): the chart's limit" % ARC_SCALE_SET_NAME_MAX,
            name,
        )
    return name


def _check_caller_keys(scale_set, path):
    """Type checks for the keys the arc_runners role reads (not rendered here)."""
    for key in ("namespace", "github_config_url", "github_config_secret", "runner_group"):
        optional_str(scale_set, key, path)
    for key in sorted(ARC_SECRET_KEYS):
        optional_secret(scale_set, key, path)
    for key in ("github_app_id", "github_app_installation_id"):
        value = scale_set.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, (str, int))):
            raise ValidationError(child(path, key), "must be a string or an integer, not %s" % type_name(value), value)
    optional_choice(scale_set, "state", path, ENTRY_STATES)
    labels = optional_str_list(scale_set, "labels", path)
    for index, label in enumerate(labels):
        if len(label) >= 256:
            raise ValidationError("%s.labels[%d]" % (path, index), "must be shorter than 256 characters", label)
    min_runners = optional_int(scale_set, "min_runners", path, minimum=0)
    max_runners = optional_int(scale_set, "max_runners", path, minimum=0)
    if min_runners is not None and max_runners is not None and max_runners < min_runners:
        raise ValidationError(child(path, "min_runners"), "must not exceed max_runners (%d)" % max_runners, min_runners)
    _check_work_volume_claim(scale_set, path)


def _check_work_volume_claim(scale_set, path):
    claim = scale_set.get("work_volume_claim")
    if claim is None:
        return
    claim_path = child(path, "work_volume_claim")
    require_mapping(claim, claim_path)
    reject_unknown_keys(claim, WORK_VOLUME_CLAIM_KEYS, claim_path)
    optional_str(claim, "storage_class", claim_path)
    size = check_quantity(claim, "size", claim_path)
    if size is None:
        raise ValidationError(child(claim_path, "size"), "is required: the size of each job pod's work volume")
    if quantity_value(size) == 0:
        # Kubernetes refuses a claim of no storage when the runner makes it, at each job.
        raise ValidationError(child(claim_path, "size"), "must be more than 0", claim["size"])
    if claim.get("access_modes") is not None:
        check_str_list(claim["access_modes"], child(claim_path, "access_modes"))
