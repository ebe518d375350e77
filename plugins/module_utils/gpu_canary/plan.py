# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gpu_canary role's plan: what its variables mean for the Jobs, decided once, before the cluster is read.

From the role's variables (under their own names) it returns:

- ``labels`` and ``label_selectors``: on every object the canary makes
  itself (its namespace, its Jobs), and how it finds them again;
- ``job_deadline``: each Job's ``activeDeadlineSeconds``, a little more
  than ``gpu_canary_job_timeout``, so that a pod that never started is
  still there to be read when the play stops waiting;
- ``wait_retries``: how many polls ``gpu_canary_poll_interval`` apart fill
  ``gpu_canary_job_timeout``;
- ``lanes``: the lanes of module_utils/gpu_canary/lanes.py, made without the
  cluster's nodes (``tasks/nodes.yml`` makes them again with them; the
  fleet's plan, playbooks/plan.yml, shows these);
- ``lane_paths``: where each input of the lanes came from in the inventory,
  for module_utils/gpu_canary/lanes.py to name in its errors: the runner role's
  own list (``gitlab_runner_pools[name=l40s].gpus``) when the canary's
  list is that list, as it is by default, else the canary's variable;
- ``gitlab``: GitLab mode (``gpu_canary_gitlab_url`` set): ``enabled``,
  ``url``, ``project``, ``ref``, ``job_timeout``; the lanes then include
  the CPU pools' lane (module_utils/gpu_canary/gitlab_jobs.py). The token never
  reaches the plan: the role says only whether one was given;
- ``node_reads``: the reads of ``tasks/nodes.yml`` (gpuci.runners.k8s_reads):
  the nodes and RuntimeClasses, and where a lane asks for DRA the
  ResourceSlices too (without their devices), which say which nodes
  NVIDIA's DRA driver hands GPUs out on (module_utils/gpu_canary/lanes.py
  ``node_check``); without a DRA lane they are not read, so a cluster or a
  kubeconfig without resource.k8s.io/v1 is never asked for them;
- ``dra_jobs``: whether a lane that asks for DRA gets a canary Job
  (module_utils/gpu_canary/jobs.py): then ``tasks/jobs.yml`` makes its claim
  template, reads its pod's claims while it runs and deletes the template
  with the Jobs;
- ``helm_list_argv``: the read-only ``helm list`` of every namespace's
  deployed releases for the report's chart table, at the cluster the
  inventory names (``gpuci_kubeconfig``, ``gpuci_kube_context``; empty or
  missing: Helm's own choice);
- ``problems``: settings the role cannot act on, each naming the variable
  at fault, all at once (the lanes' first one among them); ``[]`` when none.

The timings and the lanes are checked only for ``gpu_canary_state:
present``: removing the canary needs neither.
"""

from __future__ import annotations

import math
import re

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.jobs import proved_by_job
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.lanes import LANE_KEYS, canary_lanes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import DRA, RESOURCE_API_VERSION
from ansible_collections.gpuci.runners.plugins.module_utils.common.ownership_labels import label_selectors, ownership_labels
from ansible_collections.gpuci.runners.plugins.module_utils.common.release_names import is_dns_label
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    problem,
    require_mapping,
    setting_int,
)

COMPONENT = "gpu-canary"
# How much longer a Job may run than the play waits for it (seconds).
DEADLINE_MARGIN = 60
# The canary's lists of pools and scale sets, and the runner roles' lists they default to.
RUNNER_LISTS = (
    ("gitlab_pools", "gpu_canary_gitlab_pools", "gitlab_runner_pools"),
    ("arc_scale_sets", "gpu_canary_arc_scale_sets", "arc_runners_scale_sets"),
)
IMAGE_KINDS = ("cuda", "dri")
TIMEOUT, INTERVAL = "gpu_canary_job_timeout", "gpu_canary_poll_interval"
# Each timing variable and its least value.
TIMINGS = ((TIMEOUT, 1), (INTERVAL, 1), ("gpu_canary_job_ttl", 0))
GITLAB_URL = re.compile(r"^https?://[^/\s?#]+(/[^\s?#]*)?$")


def canary_plan(settings, gpu_classes=None):
    """See the module docstring. ``settings``: the role's gpu_canary_* variables, and the runner roles'
    ``gitlab_runner_pools`` and ``arc_runners_scale_sets`` (None where undefined) to name the pools by."""
    require_mapping(settings, "canary_plan")
    labels = ownership_labels({"app.kubernetes.io/component": COMPONENT})
    present = settings.get("gpu_canary_state", "present") == "present"
    timing, timing_problems = _timing(settings) if present else ({}, [])
    paths = _lane_paths(settings)
    gitlab, gitlab_problems = _gitlab(settings) if present else ({"enabled": False}, [])
    lanes, lane_problems = _lanes(settings, paths, gpu_classes, gitlab["enabled"]) if present else ([], [])
    return {
        "labels": labels,
        "label_selectors": label_selectors(labels),
        "job_deadline": timing[TIMEOUT] + DEADLINE_MARGIN if timing else None,
        "wait_retries": int(math.ceil(float(timing[TIMEOUT]) / timing[INTERVAL])) if timing else None,
        "lanes": lanes,
        "lane_paths": paths,
        "gitlab": gitlab,
        "node_reads": node_reads(lanes),
        "dra_jobs": any(lane.get("gpu_allocation") == DRA and proved_by_job(lane, gitlab["enabled"]) for lane in lanes),
        "helm_list_argv": helm_list_argv(settings.get("gpuci_kubeconfig"), settings.get("gpuci_kube_context")),
        "problems": _namespace_problems(settings) + timing_problems + (_report_problems(settings) if present else [])
        + gitlab_problems + lane_problems,
    }


def node_reads(lanes):
    """What tasks/nodes.yml reads before the lanes are matched against the nodes (see the module docstring)."""
    reads = [{"key": "nodes", "kind": "Node"},
             {"key": "runtime_classes", "api_version": "node.k8s.io/v1", "kind": "RuntimeClass"}]
    if any(lane.get("gpu_allocation") == DRA for lane in lanes):
        reads.append({"key": "resource_slices", "api_version": RESOURCE_API_VERSION, "kind": "ResourceSlice",
                      "hidden_fields": ["spec.devices"]})
    return reads


def helm_list_argv(kubeconfig=None, context=None):
    """``helm list`` of the deployed releases of all namespaces, as JSON (no values), at the inventory's cluster."""
    argv = ["helm", "list", "--all-namespaces", "--deployed", "--output", "json"]
    argv += ["--kubeconfig", kubeconfig] if kubeconfig else []
    argv += ["--kube-context", context] if context else []
    return argv


def _lane_paths(settings):
    """Where each lane input came from: the runner role's list when the canary's is that list, else the canary's."""
    paths = dict((key, "gpu_canary_" + key) for key in LANE_KEYS)
    for key, own, runner_role in RUNNER_LISTS:
        same = settings.get(runner_role) is not None and settings.get(own) == settings.get(runner_role)
        paths[key] = runner_role if same else own
    return paths


def _namespace_problems(settings):
    namespace = settings.get("gpu_canary_namespace")
    if is_dns_label(namespace):
        return []
    return [problem("gpu_canary_namespace", "must be a DNS label (lower case letters, digits and '-', at most 63)",
                    namespace)]


def _timing(settings):
    """The timing variables as integers and ``[]``, or ``{}`` and their problems."""
    values = dict((name, setting_int(settings.get(name))) for name, _least in TIMINGS)
    problems = [problem(name, "must be an integer >= %d" % least, settings.get(name))
                for name, least in TIMINGS if values[name] is None or values[name] < least]
    if not problems and values[INTERVAL] > values[TIMEOUT]:
        problems.append(problem(INTERVAL, "must not exceed %s (%d)" % (TIMEOUT, values[TIMEOUT]), values[INTERVAL]))
    return ({}, problems) if problems else (values, [])


def _report_problems(settings):
    images = settings.get("gpu_canary_images") or {}
    problems = [] if settings.get("gpu_canary_report_dir") else [
        problem("gpu_canary_report_dir", "must name a directory", settings.get("gpu_canary_report_dir"))]
    return problems + [problem("gpu_canary_images.%s" % kind, "must name an image", images.get(kind))
                       for kind in IMAGE_KINDS if not images.get(kind)]


def _gitlab(settings):
    """GitLab mode's settings and their problems; off (``{"enabled": False}``) when no URL is set."""
    url = settings.get("gpu_canary_gitlab_url")
    if not url:
        return {"enabled": False}, []
    problems = []
    if not isinstance(url, str) or not GITLAB_URL.match(url):
        problems.append(problem("gpu_canary_gitlab_url", "must be GitLab's http:// or https:// URL", url))
    project = settings.get("gpu_canary_gitlab_project")
    if project is None or isinstance(project, bool) or not str(project).strip():
        problems.append(problem("gpu_canary_gitlab_project", "is required with gpu_canary_gitlab_url: the canary "
                                "project's numeric id or full path (group/project)", project))
    ref = settings.get("gpu_canary_gitlab_ref")
    if not isinstance(ref, str) or not ref.strip() or ref.startswith("-") or ".." in ref or " " in ref:
        problems.append(problem("gpu_canary_gitlab_ref", "must name a branch of the canary project", ref))
    if not settings.get("gpu_canary_gitlab_api_token_given"):
        # Never the value: only whether one was given reaches the plan.
        problems.append("gpu_canary_gitlab_api_token: is required with gpu_canary_gitlab_url (an access token with "
                        "the api scope, kept in Ansible Vault)")
    timeout = setting_int(settings.get("gpu_canary_gitlab_job_timeout"))
    if timeout is None or timeout < 1:
        problems.append(problem("gpu_canary_gitlab_job_timeout", "must be an integer >= 1",
                                settings.get("gpu_canary_gitlab_job_timeout")))
    if problems:
        return {"enabled": True}, problems
    return {"enabled": True, "url": url.rstrip("/"), "project": str(project).strip(), "ref": ref,
            "job_timeout": timeout}, []


def _lanes(settings, paths, gpu_classes, cpu_lanes=False):
    """``(lanes, [])``, or ``([], [problem])``: canary_lanes stops at the first problem of the pools and scale sets."""
    spec = dict((key, settings.get("gpu_canary_" + key)) for key in LANE_KEYS)
    try:
        return canary_lanes(dict(spec, paths=paths, cpu_lanes=cpu_lanes), gpu_classes), []
    except ValidationError as error:
        return [], [str(error)]
