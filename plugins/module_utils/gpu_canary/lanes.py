# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The canary's lanes: which distinct GPU requests the runner pools and scale sets make.

Several pools often ask for the same thing (one L40S through the device
plugin, gpu_access cuda); the canary proves each distinct request once and remembers which pools and scale
sets it serves. Given the cluster's nodes, each lane also says which nodes
could take its job, so a lane without one fails before any Job is started.

Only the fields the canary needs leave this module: tokens and keys that the
pools carry for the runner roles are never copied.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.checks import JOB_PREFIX, NO_GPU, lane_commands
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import GPU_ACCESS_MODES, merged_classes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import DRA, NVIDIA_DRA_DRIVER, nodes_with_slices
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.nodes import advertises
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.request import cuda_runtime_class, resolve_gpu_request
from ansible_collections.gpuci.runners.plugins.module_utils.k8s.objects import metadata, object_name
from ansible_collections.gpuci.runners.plugins.module_utils.common.ownership_labels import labels_match
from ansible_collections.gpuci.runners.plugins.module_utils.common.pool_keys import (
    ARC_CONTAINER_MODES,
    ARC_SCALE_SET_KEYS,
    ENTRY_STATES,
    GITLAB_POOL_KEYS,
    GPU_REQUEST_KEYS,
    RENAMED_POOL_KEYS,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    check_str_list,
    child,
    item,
    named_item,
    optional_choice,
    optional_str,
    optional_str_list,
    plain,
    reject_unknown_keys,
    require_mapping,
    required_str,
    type_name,
)

# What the lanes are made of; ``paths`` names where each came from in the inventory.
LANE_KEYS = ("gitlab_pools", "arc_scale_sets", "gitlab_runtime_class", "arc_runtime_class", "setup_commands",
             "cuda_sample_commands")
INPUT_KEYS = frozenset(LANE_KEYS + ("paths", "nodes", "runtime_classes", "resource_slices", "cpu_lanes"))
# The one lane of the GitLab pools without a GPU (GitLab mode only): what its jobs show.
CPU_LANE = "cpu"

# How a node says that it is simulated (the testbed's kwok nodes).
SIMULATED_LABEL = "gpuci.runners/simulated"
# A real node whose GPUs are advertised but absent (a node status patch, as
# the kind scenario's GPUCI_KIND_SIMULATE does): its containers run, no GPU
# can be proved there.
SIMULATED_GPU_LABEL = "gpuci.runners/simulated-gpu"
KWOK_ANNOTATION = "kwok.x-k8s.io/node"

# Kubernetes object names: a Job name becomes a label value (<= 63 chars).
_NAME_LIMIT = 52
_NOT_DNS = re.compile(r"[^a-z0-9-]+")


def canary_lanes(spec, gpu_classes=None, path="canary"):
    """Return one lane per distinct GPU request of the pools and scale sets.

    ``spec`` holds ``gitlab_pools`` and ``arc_scale_sets`` (as the runner
    roles take them), the RuntimeClass each role gives cuda lanes that name
    none (``gitlab_runtime_class``, ``arc_runtime_class``: None for the
    default, ``""`` for none), the commands run before a lane's checks per
    gpu_access (``setup_commands``) and after them on cuda lanes
    (``cuda_sample_commands``) and, optionally, ``nodes`` (Node objects as
    the API returns them) and ``runtime_classes`` (their names, or the
    RuntimeClass objects as the API returns them) and ``resource_slices``
    (ResourceSlice objects as read: where a DRA lane's GPUs are published;
    only their ``spec.driver`` and ``spec.nodeName`` are used). Every lane
    carries the ``commands`` its Job and CI snippets run and its Job's name
    (``job_name``, module_utils/gpu_canary/checks.py); with ``nodes`` it carries
    ``node_check``.

    A pool with ``gpu_allocation: dra`` makes a lane of its own (never one
    with device-plugin pools of the same class): it says ``gpu_allocation``
    (``dra``), ``device_class`` and ``claim`` (``device_class``, ``selectors``,
    ``count``: what its pods claim, gpu/dra.py), has no ``resource``, and is
    named ``<class>-cuda-dra-<n>gpu`` (``-dra-mig-<profile>``). A device-plugin
    lane has none of these keys: its shape is as it always was.

    With ``cpu_lanes`` true (GitLab mode: a GitLab job proves each pool)
    the present GitLab pools without a ``gpu_class`` also make one lane,
    ``cpu`` (gpu_access ``none``, check ``cpu``): no device, so its jobs'
    result is ``passed``, never ``proved``; the scheduler alone places them,
    so its node check is always ok.

    An error names the field as the inventory does when ``paths`` says
    where each of the keys above came from (``{"gitlab_pools":
    "gitlab_runner_pools"}``: ``gitlab_runner_pools[name=l40s].gpus``; the
    canary's plan decides, module_utils/gpu_canary/plan.py); a key it does not
    name is ``<path>.<key>``.
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    paths = _paths(spec.get("paths"), path)
    setup_commands = _setup_commands(spec.get("setup_commands"), paths["setup_commands"])
    cuda_sample_commands = check_str_list(spec.get("cuda_sample_commands") or [], paths["cuda_sample_commands"])
    classes = merged_classes(gpu_classes)
    lanes = {}
    for consumer in _consumers(spec, paths):
        request = resolve_gpu_request(consumer["gpu"], classes, consumer["path"], consumer["runtime_class"])
        key = _lane_key(consumer["gpu"], request)
        lane = lanes.get(key)
        if lane is None:
            lane = lanes[key] = _new_lane(consumer["gpu"], request, classes[request.gpu_class]["product"])
        lane[consumer["kind"]].append(consumer["entry"])
    result = _with_unique_names(list(lanes.values()))
    if spec.get("cpu_lanes"):
        cpu_pools = list(_cpu_pools(spec, paths))
        if cpu_pools:
            result.append(dict(_cpu_lane(), gitlab_pools=cpu_pools))
    for lane in result:
        lane["commands"] = lane_commands(lane, setup_commands, cuda_sample_commands)
        lane["job_name"] = JOB_PREFIX + lane["name"]
    if spec.get("nodes") is not None:
        nodes = _check_list(spec["nodes"], child(path, "nodes"))
        runtime_classes = _check_names(spec.get("runtime_classes"), child(path, "runtime_classes"))
        slices = _check_list(spec.get("resource_slices"), child(path, "resource_slices"))
        for lane in result:
            lane["node_check"] = node_check(lane, nodes, runtime_classes, slices)
    return result


def _cpu_pools(spec, paths):
    """The present GitLab pools without a gpu_class, with the fields the canary keeps (checked as the GPU ones)."""
    list_path = paths["gitlab_pools"]
    for index, pool in enumerate(_check_list(spec.get("gitlab_pools"), list_path)):
        entry_path = named_item(list_path, pool, index)
        if optional_choice(pool, "state", entry_path, ENTRY_STATES, "present") == "present" and pool.get("gpu_class") is None:
            yield _gitlab_entry(pool, entry_path)


def _cpu_lane():
    return {
        "name": CPU_LANE, "gpu_class": CPU_LANE, "product": None, "gpu_access": NO_GPU, "gpus": None, "mig_profile": None,
        "resource": None, "count": 0, "request_text": "no GPU", "check": "cpu", "node_selector": {},
        "runtime_class": None, "pod_request": None, "gitlab_pools": [], "arc_scale_sets": [],
    }


def _paths(named, path):
    """Where each lane key came from: ``named``'s inventory path, else ``<path>.<key>``."""
    named = require_mapping(named or {}, child(path, "paths"))
    reject_unknown_keys(named, LANE_KEYS, child(path, "paths"))
    return dict((key, str(named.get(key) or child(path, key))) for key in LANE_KEYS)


def _setup_commands(value, path):
    commands = require_mapping(value or {}, path)
    reject_unknown_keys(commands, GPU_ACCESS_MODES, path)
    return dict((access, check_str_list(commands[access] or [], child(path, access))) for access in commands)


def _gitlab_entry(pool, path):
    return {
        "name": required_str(pool, "name", path),
        "tags": optional_str_list(pool, "tags", path),
        "image": optional_str(pool, "image", path),
    }


def _arc_entry(scale_set, path):
    return {
        "name": required_str(scale_set, "name", path),
        "runner_group": optional_str(scale_set, "runner_group", path),
        "labels": optional_str_list(scale_set, "labels", path),
        "container_mode": optional_choice(scale_set, "container_mode", path, ARC_CONTAINER_MODES, "none"),
    }


# Input list -> (accepted keys, the fields the canary keeps of an entry,
# the input key of the runtime class its role gives cuda lanes).
_CONSUMER_KINDS = (
    ("gitlab_pools", GITLAB_POOL_KEYS, _gitlab_entry, "gitlab_runtime_class"),
    ("arc_scale_sets", ARC_SCALE_SET_KEYS, _arc_entry, "arc_runtime_class"),
)


def _consumers(spec, paths):
    """Yield each present GPU pool and scale set with the fields the canary keeps."""
    for kind, keys, entry_of, runtime_class_key in _CONSUMER_KINDS:
        runtime_class = cuda_runtime_class(spec.get(runtime_class_key), paths[runtime_class_key])
        list_path = paths[kind]
        for index, consumer in enumerate(_check_list(spec.get(kind), list_path)):
            entry_path = named_item(list_path, consumer, index)
            require_mapping(consumer, entry_path)
            reject_unknown_keys(consumer, keys, entry_path, RENAMED_POOL_KEYS)
            if not _wanted(consumer, entry_path):
                continue
            yield {"kind": kind, "path": entry_path, "gpu": _gpu_keys(consumer), "entry": entry_of(consumer, entry_path),
                   "runtime_class": runtime_class}


def _wanted(entry, path):
    """A pool is a canary lane when it is present and has a GPU class (else it is a CPU pool)."""
    state = optional_choice(entry, "state", path, ENTRY_STATES, "present")
    return state == "present" and entry.get("gpu_class") is not None


def _gpu_keys(entry):
    return dict((key, plain(entry[key])) for key in sorted(GPU_REQUEST_KEYS) if entry.get(key) is not None)


def _lane_key(gpu, request):
    # The same class, gpu_access and amount is one lane, unless a pool also moves
    # the pods elsewhere (its own selector, tolerations or runtime class) or
    # reaches its GPU another way (DRA instead of the device plugin).
    return repr((
        request.claim is not None,
        request.gpu_class,
        request.gpu_access,
        gpu.get("mig_profile"),
        request.count,
        sorted(request.node_selector.items()),
        [sorted(t.items()) for t in request.tolerations],
        request.runtime_class,
        request.privileged,
    ))


def _new_lane(gpu, request, product):
    mig_profile = gpu.get("mig_profile")
    check, request_text = _check_and_request(request, mig_profile)
    lane = {
        "name": _base_name(request, mig_profile),
        "gpu_class": request.gpu_class,
        # The class's product label: what the exact proof compares the GPU the job saw with (exact_proof.py).
        "product": product,
        "gpu_access": request.gpu_access,
        "gpus": request.count if (request.resource or request.claim) and not mig_profile else None,
        "mig_profile": mig_profile,
        "resource": request.resource,
        "count": request.count,
        "request_text": request_text,
        "check": check,
        "node_selector": dict(request.node_selector),
        "runtime_class": request.runtime_class,
        # What gpu_pod_patch takes: the GPU keys of the first pool that asked,
        # with the runtime class resolved as its role did ("" for none), so
        # the canary's pod runs where and how that pool's job pods run.
        "pod_request": dict(gpu, runtime_class=request.runtime_class or ""),
        "gitlab_pools": [],
        "arc_scale_sets": [],
    }
    if request.claim is not None:
        # Only a DRA lane says how it is allocated: a device-plugin lane keeps the shape it always had.
        claim = request.claim
        lane.update(gpu_allocation=DRA, device_class=claim.device_class,
                    claim={"device_class": claim.device_class, "selectors": list(claim.selectors),
                           "count": claim.count})
    return lane


def _check_and_request(request, mig_profile):
    """The lane's check, and what its pod asks for in words."""
    if request.gpu_access == "dri":
        return "dri", "host /dev/dri"
    check = "mig" if mig_profile else "nvidia-smi"
    if request.claim is not None:
        return check, "DRA claim %s%s: %d" % (request.claim.device_class, " " + mig_profile if mig_profile else "",
                                              request.claim.count)
    return check, "%s: %d" % (request.resource, request.count)


def _base_name(request, mig_profile):
    allocation = "-dra" if request.claim is not None else ""
    if request.gpu_access == "dri":
        amount = ""
    elif mig_profile:
        amount = "%s-mig-%s" % (allocation, mig_profile)
    else:
        amount = "%s-%dgpu" % (allocation, request.count)
    return _dns_label("%s-%s%s" % (request.gpu_class, request.gpu_access, amount))


def _dns_label(text):
    name = _NOT_DNS.sub("-", text.lower()).strip("-")
    if len(name) > _NAME_LIMIT:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:6]
        name = name[: _NAME_LIMIT - 7].rstrip("-") + "-" + digest
    return name


def _with_unique_names(lanes):
    """Lanes that differ only in placement overrides share a base name: number them."""
    seen = {}
    for lane in lanes:
        base = lane["name"]
        seen[base] = seen.get(base, 0) + 1
        if seen[base] > 1:
            lane["name"] = "%s-%d" % (base, seen[base])
    return lanes


def node_check(lane, nodes, runtime_classes, slices=()):
    """Can any node take the lane's job? The scheduler has the last word; this catches the obvious.

    Returns ``ok``, ``reason``, ``matching`` (nodes whose labels fit the
    selector), ``schedulable`` (of those, not cordoned and offering the
    lane's GPU) and ``simulated`` (matching nodes that kwok simulates).

    A device-plugin lane's node offers its GPU when it advertises the
    lane's resource as allocatable. A DRA lane's GPUs are not an allocatable
    resource: its node offers them when NVIDIA's DRA driver publishes a
    ResourceSlice for it (``spec.driver`` gpu.nvidia.com, ``spec.nodeName``
    the node; ``slices``, as the role reads them). Whether a device there
    meets the class's CEL selector only the scheduler can say.
    """
    if lane["gpu_access"] == NO_GPU:
        # A CPU job goes wherever its pool's own placement and the scheduler put it: nothing to check first.
        return {"matching": [], "schedulable": [], "simulated": [], "ok": True, "reason": ""}
    matching = [n for n in nodes if labels_match(metadata(n).get("labels") or {}, lane["node_selector"])]
    offers = _publishes(slices) if lane.get("gpu_allocation") == DRA else (lambda n: _advertises(n, lane["resource"]))
    schedulable = [n for n in matching if not _cordoned(n) and offers(n)]
    result = {
        "matching": [object_name(n) for n in matching],
        "schedulable": [object_name(n) for n in schedulable],
        "simulated": [object_name(n) for n in matching if is_simulated(n)],
        "ok": False,
        "reason": "",
    }
    selector = ", ".join("%s=%s" % pair for pair in sorted(lane["node_selector"].items()))
    if not matching:
        result["reason"] = "no schedulable node: no node matches the selector %s" % selector
    elif not schedulable:
        result["reason"] = "no schedulable node: nodes %s match %s but none is uncordoned and %s" % (
            ", ".join(result["matching"]), selector, _offer(lane))
    elif lane["runtime_class"] and lane["runtime_class"] not in runtime_classes:
        result["reason"] = "RuntimeClass %s does not exist (the GPU Operator's toolkit creates it)" % lane["runtime_class"]
    else:
        result["ok"] = True
    return result


def _offer(lane):
    """What a node lacks when none of a lane's matching nodes can take its job."""
    if lane.get("gpu_allocation") == DRA:
        return ("has a ResourceSlice of driver %s (NVIDIA's DRA driver publishes one for each node whose GPUs it "
                "hands out)" % NVIDIA_DRA_DRIVER)
    return "advertise allocatable %s" % lane["resource"] if lane["resource"] else "are schedulable"


def _publishes(slices):
    """A node test: does NVIDIA's DRA driver publish a ResourceSlice for it?"""
    published = nodes_with_slices(slices)
    return lambda node: object_name(node) in published


def is_simulated(node):
    return bool(simulation_markers(node))


def simulation_markers(node):
    """How a node says that it is simulated (kwok's annotation, any value; our label); empty for a real node."""
    markers = []
    annotations = metadata(node).get("annotations") or {}
    if KWOK_ANNOTATION in annotations:
        markers.append("annotation %s=%s" % (KWOK_ANNOTATION, annotations[KWOK_ANNOTATION]))
    if (metadata(node).get("labels") or {}).get(SIMULATED_LABEL) == "true":
        markers.append("label %s=true" % SIMULATED_LABEL)
    return markers


def _cordoned(node):
    return bool((node.get("spec") or {}).get("unschedulable"))


def _advertises(node, resource):
    if not resource:
        return True  # gpu_access dri requests nothing; the selector found the host
    return advertises(node, resource)


def _check_list(value, path):
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise ValidationError(path, "must be a list, not %s" % type_name(value), value if not isinstance(value, dict) else "{...}")
    for index, entry in enumerate(value):
        require_mapping(entry, item(path, index))
    return list(value)


def _check_names(value, path):
    """Names, given as such or as the objects the API returned (the role passes its read as it is)."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        value = [object_name(v) if isinstance(v, Mapping) else v for v in value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ValidationError(path, "must be a list of names", value)
    return [str(v) for v in value]
