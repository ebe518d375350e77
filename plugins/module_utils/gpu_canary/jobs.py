# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The canary's Jobs: one per lane with a node to run on, its pod placed as the runners' job pods are.

A lane's pod gets the same strategic-merge patch the runner roles give their
job pods (gpu_pod_patch of the lane's ``pod_request``: resources, node
selector, tolerations, runtime class, volumes), on the container that runs
the lane's commands (canary_lanes). The base pod has no placement of its own,
so laying the patch's pod-level keys over it equals the strategic merge the
runners get. The Job runs once (``backoffLimit: 0``), ends at its deadline
and is deleted a while after it finished.

A DRA lane's pod claims its GPU from a ResourceClaimTemplate that the canary
makes itself, in its own namespace, from the lane's claim (gpu/dra.py
``claim_template``), named after the Job (``<job name>-gpu``) and labelled as
the Job: it comes right before its Job in the list, so the one apply makes it
first, and the role deletes it with the Jobs, by the canary's labels.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.checks import CONTAINER, lane_image
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import DRA, DeviceClaim, claim_template, claim_template_name
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.pod_patch import gpu_pod_patch
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    check_int,
    check_str_map,
    child,
    item,
    object_list,
    reject_unknown_keys,
    require_mapping,
    required_str,
)

INPUT_KEYS = frozenset(("lanes", "namespace", "labels", "images", "image_pull_secrets", "deadline", "ttl",
                        "gitlab_mode"))
# The label that names a pod's lane (the labels of every canary object besides).
LANE_LABEL = "gpuci.runners/canary-lane"


def canary_jobs(spec, gpu_classes=None, path="canary_jobs"):
    """The Job of each lane whose ``node_check`` is ok, in the lanes' order (a DRA lane's claim template before it).

    ``spec`` holds ``lanes`` (canary_lanes' lanes, with their node checks),
    ``namespace``, ``labels`` (of every object the canary creates),
    ``images`` (by gpu_access), ``image_pull_secrets``, ``deadline`` (the
    Job's activeDeadlineSeconds) and ``ttl`` (its ttlSecondsAfterFinished).
    With ``gitlab_mode`` true, GitLab jobs prove the lanes' GitLab pools
    (module_utils/gpu_canary/gitlab_jobs.py): only lanes that serve an ARC scale set
    get a Job.
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    namespace = required_str(spec, "namespace", path)
    labels = check_str_map(spec.get("labels") or {}, child(path, "labels"))
    images = check_str_map(spec.get("images") or {}, child(path, "images"))
    pull_secrets = object_list(spec.get("image_pull_secrets"), child(path, "image_pull_secrets"))
    deadline = check_int(spec.get("deadline"), child(path, "deadline"), minimum=1)
    ttl = check_int(spec.get("ttl"), child(path, "ttl"), minimum=0)
    objects = []
    for index, lane in enumerate(object_list(spec.get("lanes"), child(path, "lanes"))):
        if not (lane.get("node_check") or {}).get("ok"):
            continue
        if not proved_by_job(lane, spec.get("gitlab_mode")):
            continue
        lane_path = item(child(path, "lanes"), index)
        image = lane_image(images, lane, child(path, "images"))
        pod_labels = dict(labels, **{LANE_LABEL: lane["name"]})
        pod = _pod_spec(lane, image, pull_secrets, gpu_classes, lane_path)
        if lane.get("gpu_allocation") == DRA:
            objects.append(_claim_template(lane, namespace, pod_labels, lane_path))
        objects.append({
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": lane["job_name"], "namespace": namespace, "labels": pod_labels},
            "spec": {
                "backoffLimit": 0,
                "activeDeadlineSeconds": deadline,
                "ttlSecondsAfterFinished": ttl,
                "template": {"metadata": {"labels": pod_labels}, "spec": pod},
            },
        })
    return objects


def proved_by_job(lane, gitlab_mode):
    """Whether a lane gets a canary Job: every lane, but in GitLab mode only one that serves an ARC scale set."""
    return not gitlab_mode or bool(lane.get("arc_scale_sets"))


def _claim_template(lane, namespace, labels, path):
    """The canary's own ResourceClaimTemplate of a DRA lane: its Job's pod claims from it, as a pool's pods do from theirs.

    The claim made from it for the pod carries the canary's labels too
    (the template's ``spec.metadata``), so the role reads the canary's
    claims by its labels, as it reads its Jobs and pods.
    """
    claim = require_mapping(lane.get("claim"), child(path, "claim"))
    template = claim_template(DeviceClaim(claim["device_class"], list(claim["selectors"]), claim["count"]),
                              claim_template_name(lane["job_name"]), namespace, labels)
    template["spec"]["metadata"] = {"labels": dict(labels)}
    return template


def _pod_spec(lane, image, pull_secrets, gpu_classes, path):
    # The Job's name names a DRA lane's claim template (gpu_pod_patch: claim_template_name of the pool's name).
    patch = gpu_pod_patch(dict(lane["pod_request"], container=CONTAINER, name=lane["job_name"]), gpu_classes,
                          child(path, "pod_request"))
    # One shell line joined by "; ": a newline in a folded YAML scalar once
    # reached the shell as a backslash and an n.
    container = {"name": CONTAINER, "image": image,
                 "command": ["/bin/sh", "-c", "; ".join(["set -e"] + list(lane["commands"]))]}
    container.update(next(c for c in patch["containers"] if c["name"] == CONTAINER))
    pod = {"restartPolicy": "Never", "automountServiceAccountToken": False, "enableServiceLinks": False,
           "terminationGracePeriodSeconds": 5, "imagePullSecrets": list(pull_secrets)}
    pod.update((key, value) for key, value in patch.items() if key != "containers")
    pod["containers"] = [container]
    return pod
