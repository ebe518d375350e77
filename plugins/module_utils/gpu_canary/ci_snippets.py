# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The canary's CI snippets: the lanes' checks as jobs the users' own repositories run.

The canary Jobs prove a lane from inside the cluster; the snippets prove the
same lane the way users reach it, through the runners: one GitLab job per GPU
pool (picked by the pool's tags) and one GitHub workflow per scale set
(picked by the scale set's name, which ARC always matches). Each runs the
lane's ``commands`` (canary_lanes) on the pool's own ``image`` when it
sets one, else the lane's canary image, so the log holds what the canary's
verdict looks for. The GitLab jobs are also what the canary commits to its
own project in GitLab mode (module_utils/gpu_canary/gitlab_jobs.py): they clone the
project as users' jobs do (no ``GIT_STRATEGY: none``), so a runner that
cannot fetch fails the lane as it would fail users.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.checks import JOB_PREFIX, lane_image
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    check_int,
    check_str_map,
    child,
    object_list,
    reject_unknown_keys,
    require_mapping,
)

INPUT_KEYS = frozenset(("lanes", "images", "job_timeout"))
# Daily, off the hour: many schedules start at :00 and queue behind each other.
WORKFLOW_SCHEDULE = "17 5 * * *"


def canary_ci(spec, path="canary_ci"):
    """Return ``gitlab_jobs`` (job name -> job) and ``workflows`` (scale set name -> workflow).

    ``spec`` holds ``lanes`` (canary_lanes' lanes), ``images`` (the canary
    image by gpu_access) and ``job_timeout`` (seconds a lane may run).
    """
    require_mapping(spec, path)
    reject_unknown_keys(spec, INPUT_KEYS, path)
    images = check_str_map(spec.get("images") or {}, child(path, "images"))
    timeout_minutes = -(-check_int(spec.get("job_timeout"), child(path, "job_timeout"), minimum=1) // 60)
    gitlab_jobs, workflows = {}, {}
    for lane in object_list(spec.get("lanes"), child(path, "lanes")):
        image = lane_image(images, lane, child(path, "images"))
        for pool in lane.get("gitlab_pools") or []:
            # Named as the canary's own Jobs are, after the pool instead of the lane.
            gitlab_jobs[gitlab_job_name(pool)] = _gitlab_job(lane, pool, pool.get("image") or image)
        for scale_set in lane.get("arc_scale_sets") or []:
            workflows[scale_set["name"]] = _workflow(lane, scale_set, image, timeout_minutes)
    return {"gitlab_jobs": gitlab_jobs, "workflows": workflows}


def gitlab_job_name(pool):
    """The name of a pool's canary job in .gitlab-ci.yml (how the canary finds it in a pipeline)."""
    return JOB_PREFIX + pool["name"]


def _gitlab_job(lane, pool, image):
    # The pool's image when it sets one: the one its users' jobs get. A CPU
    # pool without one gets no image key, so the runner's default applies.
    job = {"tags": list(pool.get("tags") or [])}
    if image:
        job["image"] = image
    job["script"] = list(lane["commands"])
    return job


def _workflow(lane, scale_set, image, timeout_minutes):
    # ARC takes a job by the scale set's name; a runner group narrows it further.
    runs_on = scale_set["name"]
    if scale_set.get("runner_group"):
        runs_on = {"group": scale_set["runner_group"], "labels": [scale_set["name"]]}
    job = {"runs-on": runs_on, "timeout-minutes": timeout_minutes}
    # In kubernetes container mode the GPU belongs to the job's container, so
    # the workflow names the image; otherwise the runner container has it.
    if scale_set.get("container_mode") == "kubernetes":
        job["container"] = {"image": image}
    job["steps"] = [{"run": command} for command in lane["commands"]]
    return {
        "name": "GPU canary (%s)" % scale_set["name"],
        "on": {"workflow_dispatch": {}, "schedule": [{"cron": WORKFLOW_SCHEDULE}]},
        "permissions": {"contents": "read"},
        "jobs": {"gpu-canary": job},
    }
