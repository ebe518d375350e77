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
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.checks import CONTAINER, lane_image
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
    """The Job of each lane whose ``node_check`` is ok, in the lanes' order.

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
    jobs = []
    for index, lane in enumerate(object_list(spec.get("lanes"), child(path, "lanes"))):
        if not (lane.get("node_check") or {}).get("ok"):
            continue
        if spec.get("gitlab_mode") and not lane.get("arc_scale_sets"):
            continue
        lane_path = item(child(path, "lanes"), index)
        image = lane_image(images, lane, child(path, "images"))
        pod_labels = dict(labels, **{LANE_LABEL: lane["name"]})
        pod = _pod_spec(lane, image, pull_secrets, gpu_classes, lane_path)
        jobs.append({
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
    return jobs


def _pod_spec(lane, image, pull_secrets, gpu_classes, path):
    patch = gpu_pod_patch(dict(lane["pod_request"], container=CONTAINER), gpu_classes, child(path, "pod_request"))
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
