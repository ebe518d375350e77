# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gitlab_runner role's plan: what its pools become in the cluster, decided once.

From the role's variables (under their own names, as the preflight filter
takes them, pools without their tokens) it returns:

- ``pools``: every pool with the role's defaults filled in (``namespace``,
  ``gitlab_url``, ``concurrent``, ``state``);
- ``namespaces``: the namespaces the present pools need (managers' and jobs');
- ``releases``: one gitlab-runner release per present pool, complete with its
  chart source, timeout and the whole values document, ready for
  ``gpuci.runners.helm_releases``;
- ``access``: per present pool, the manager's ServiceAccount and the Role and
  RoleBinding in the job namespace (what the Kubernetes executor needs);
- ``claim_templates``: per present pool that asks for DRA
  (``gpu_allocation: dra``), its ResourceClaimTemplate in the job namespace
  (gpu/dra_pools.py), applied with the access objects; ``dra_needs``: the
  DeviceClass each of those pools' claims names, which the converge's
  decision checks against the cluster before anything changes;
- ``secrets``: per present pool, the name, namespace, labels and GitLab URL of
  the Secret that holds its runner token (the token never passes through here;
  gitlab_runner/token_secrets.py fills it in);
- ``labels``: the fleet's labels, which scope pruning and teardown, and
  ``label_selectors``: the same as ``k8s_info`` takes them;
- ``release_selector``: selects the present pools' chart objects by release;
- ``pool_label`` and ``created_annotation``: the label that ties an object
  to its pool, and the annotation on a token Secret whose runner the role
  created in GitLab;
- ``created_pools``: the present pools without a token, whose runner the
  role creates in GitLab (names only: the tokens' presence is read here,
  never their value), and ``created_selectors``: what selects their token
  Secrets (``[]`` when there are none);
- ``converges``: whether the role installs anything (state present);
- ``removal``: what decides the removals (``gitlab_runner/removals.py``):
  the role's ``state``, ``prune``, ``fleet``, ``namespace`` and ``timeout``, the
  seconds an uninstall may wait for its manager to stop (at least the
  managers' grace period, ``gitlab_runner/manager_stop.py``), and
  ``allow_removing_all`` (``gitlab_runner_allow_removing_all_pools``: a
  converge may remove every pool the cluster holds though the inventory
  declares none of them);
- ``pod_monitors``: what decides whether each release makes the chart's
  PodMonitor (``gitlab_runner_pod_monitors``, the CRD); the converge's
  decision sets it with ``pod_monitor_releases``. Each release turns the
  managers' metrics server on (``gitlab_runner_metrics``), its PodMonitor
  relabelled to the alert rules' SCRAPE_LABELS (monitoring/monitors.py);
- ``reads`` and ``readback_reads``: what the role reads, as
  ``gpuci.runners.k8s_reads`` takes it (answers under the group
  ``gitlab_runner``), to decide what a converge would change and what to
  remove, and after a converge to verify it.

The role applies the plan; it computes it once per run (one set_fact), and
the plan renders each pool's config.toml once: the rules of what it holds
are checked as it is made (gitlab_runner_config.pool_configs), the other
rules after (gitlab_runner_preflight.pool_problems), and every problem of
both comes back at once, in the order the inventory names them.
"""

from __future__ import annotations

import copy

from ansible_collections.gpuci.runners.plugins.module_utils.common.chart_source import check_chart_source
from ansible_collections.gpuci.runners.plugins.module_utils.common.merging import deep_merge
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.config import pool_configs
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.manager_stop import removal_timeout
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.preflight import (
    POOLS,
    pool_problems,
    role_concurrent,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import RESOURCE_API_VERSION
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra_pools import (
    CLAIM_TEMPLATE_KIND,
    claim_templates,
    device_class_needs,
    dra_reads,
    entry_claims,
)
from ansible_collections.gpuci.runners.plugins.module_utils.k8s.reads import AVAILABLE, read
from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.monitors import (
    POD_MONITOR_CRD,
    crd_read,
    metrics_switch_problems,
    monitor_labels,
    monitor_problems,
    monitor_spec,
    monitors_wanted,
    scrape_relabelings,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.ownership_labels import label_selectors, ownership_labels, set_selector
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.pending_changes import release_record_selectors
from ansible_collections.gpuci.runners.plugins.module_utils.common.pool_keys import GITLAB_POOL_DEFAULTS, GITLAB_SECRET_KEYS
from ansible_collections.gpuci.runners.plugins.module_utils.common.release_names import GITLAB_RELEASE_PREFIX
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import mapping_list, require_mapping

CHART = "gitlab-runner"
# Read back by the role's prune step once a pool has left the inventory.
JOB_NAMESPACE_ANNOTATION = "gpuci.runners/job-namespace"
POOL_LABEL = "gpuci.runners/pool"
# On a manager pod of a pool with a GPU class: the scrape's gpu_class label comes from it.
GPU_CLASS_LABEL = "gpuci.runners/gpu-class"
# The managers' metrics server (the chart writes listen_address from the port).
METRICS_PORT = 9252
METRICS_PORT_NAME = "metrics"
METRICS = "gitlab_runner_metrics"
POD_MONITORS = "gitlab_runner_pod_monitors"
POD_MONITOR_LABELS = "gitlab_runner_pod_monitor_labels"
# Lets one converge remove every pool the cluster holds though the inventory declares none of them (removals.py).
ALLOW_REMOVING_ALL = "gitlab_runner_allow_removing_all_pools"
# The group of the role's reads in k8s_reads' answer (site.yml reads for every role at once).
GROUP = "gitlab_runner"
RBAC = "rbac.authorization.k8s.io/v1"
# On a pool's token Secret: the GitLab URL the role created its runner in.
CREATED_IN_ANNOTATION = "gpuci.runners/created-in-gitlab"
FLEET_LABEL = "gpuci.runners/fleet"
# The chart's probe only asks whether the runner process exists (pgrep), yet
# waits 60 s before its first try: every rollout would stall a minute.
READINESS_PROBE = {"initialDelaySeconds": 3, "periodSeconds": 5}
HPA_DEFAULT_MIN_REPLICAS = 1
HPA_DEFAULT_CPU_UTILIZATION = 80


def release_name(pool_name):
    """Releases are named gitlab-runner-<pool>, so the chart's objects are too."""
    return GITLAB_RELEASE_PREFIX + pool_name


def token_secret_name(pool_name):
    return release_name(pool_name) + "-token"


def needed_namespaces(pools, manager_namespace):
    """The managers' namespace and every job namespace of the present pools."""
    present = [pool for pool in pools if pool["state"] == "present"]
    return sorted({manager_namespace} | {pool["namespace"] for pool in present}) if present else []


def fleet_labels(fleet):
    return ownership_labels({"app.kubernetes.io/component": CHART, FLEET_LABEL: fleet})


def gitlab_runner_plan(settings, gpu_classes=None):
    """The role's plan (see the module docstring), or only its ``problems`` when the pools break a rule."""
    require_mapping(settings, "gitlab_runner_plan")
    pools = [_with_defaults(pool, settings) for pool in mapping_list(settings, POOLS)]
    # Each pool's config.toml is rendered once: its rules are checked as it
    # is made, and the text goes into the pool's release.
    configs, config_problems = pool_configs(pools, gpu_classes, settings.get("gitlab_runner_runtime_class"), POOLS)
    problems = pool_problems(settings, config_problems) + _monitoring_problems(settings)
    if problems:
        return {"problems": problems}
    labels = fleet_labels(settings["gitlab_runner_fleet"])
    present = [pool for pool in pools if pool["state"] == "present"]
    if present:
        check_chart_source("gitlab_runner", settings)
    created = _created_pools(settings)
    releases = [_release(pool, configs[index], labels, settings)
                for index, pool in enumerate(pools) if pool["state"] == "present"]
    selector = set_selector("release", [release["name"] for release in releases])
    record_selectors = release_record_selectors(release["name"] for release in releases)
    claims = entry_claims(present, gpu_classes, POOLS)
    return {
        "labels": labels,
        "label_selectors": label_selectors(labels),
        "pools": pools,
        "namespaces": needed_namespaces(pools, settings["gitlab_runner_namespace"]),
        "releases": releases,
        "access": [obj for pool in present for obj in _access(pool, labels, settings)],
        "claim_templates": claim_templates(claims, lambda pool: _pool_labels(labels, pool)),
        "dra_needs": device_class_needs(claims),
        "secrets": [{"pool": pool["name"], "name": token_secret_name(pool["name"]), "gitlab_url": pool["gitlab_url"],
                     "namespace": settings["gitlab_runner_namespace"], "labels": _pool_labels(labels, pool)}
                    for pool in present],
        "release_selector": selector,
        "release_record_selectors": record_selectors,
        "pool_label": POOL_LABEL,
        "created_annotation": CREATED_IN_ANNOTATION,
        "created_pools": created,
        "created_selectors": label_selectors(labels) + [set_selector(POOL_LABEL, created)] if created else [],
        "converges": settings.get("gitlab_runner_state", "present") == "present",
        "removal": {"state": settings.get("gitlab_runner_state", "present"),
                    "prune": bool(settings.get("gitlab_runner_prune", True)),
                    "fleet": settings["gitlab_runner_fleet"],
                    "allow_removing_all": bool(settings.get(ALLOW_REMOVING_ALL, False)),
                    "namespace": settings["gitlab_runner_namespace"],
                    "timeout": removal_timeout(settings["gitlab_runner_wait_timeout"],
                                               settings.get("gitlab_runner_extra_values"))},
        "pod_monitors": _pod_monitors(settings),
        "reads": _reads(settings, labels, selector, record_selectors) + _monitor_reads(settings, releases)
        + dra_reads(GROUP, claims),
        "readback_reads": _readback_reads(settings, selector) if releases else [],
        "problems": [],
    }


def _reads(settings, labels, selector, record_selectors):
    """What the role decides from, in one k8s_reads run.

    Each pool the role installed has a manager ServiceAccount labelled with
    the fleet and the pool, so pools the inventory has forgotten are still
    found; namespaces the role created carry the fleet's labels. The rest is
    what a converge would apply and verify: its objects, Helm's release
    records, the rendered ConfigMaps and the managers.
    """
    namespace = settings["gitlab_runner_namespace"]
    pool_objects = label_selectors(labels) + [POOL_LABEL]
    return [
        read(GROUP, "namespaces", "Namespace"),
        read(GROUP, "accounts", "ServiceAccount", label_selectors=pool_objects),
        read(GROUP, "roles", "Role", RBAC, label_selectors=pool_objects),
        read(GROUP, "role_bindings", "RoleBinding", RBAC, label_selectors=pool_objects),
        # Found on a cluster without resource.k8s.io/v1 too: k8s_info answers api_found false, no error.
        read(GROUP, "claim_templates", CLAIM_TEMPLATE_KIND, RESOURCE_API_VERSION, label_selectors=pool_objects),
        read(GROUP, "secrets", "Secret", namespace=namespace, label_selectors=pool_objects),
        read(GROUP, "release_records", "Secret", namespace=namespace, helm_releases=True,
             label_selectors=record_selectors),
        read(GROUP, "configmaps", "ConfigMap", namespace=namespace, label_selectors=[selector]),
        # The managers' names and status; their pod spec is the chart's (a third of the read).
        read(GROUP, "managers", "Deployment", "apps/v1", namespace=namespace, label_selectors=[selector],
             hidden_fields=["spec"]),
    ]


def _monitoring_problems(settings):
    """The metrics and monitor variables' problems: a bad mode or labels, monitors on without metrics."""
    return metrics_switch_problems(settings, METRICS) + monitor_problems(
        settings, POD_MONITORS, POD_MONITOR_LABELS, METRICS, settings.get(METRICS, True),
        "a PodMonitor needs the managers' metrics")


def _pod_monitors(settings):
    """What decides whether the pools' releases make the chart's PodMonitor (``pod_monitor_releases``)."""
    return monitor_spec(settings, POD_MONITORS, POD_MONITOR_CRD, wanted=settings.get(METRICS, True))


def _monitor_reads(settings, releases):
    """The PodMonitor CRD, read only when a present pool may get a monitor."""
    if not releases or _pod_monitors(settings)["mode"] == "off":
        return []
    return [crd_read(GROUP, "pod_monitor_crd", POD_MONITOR_CRD)]


def pod_monitor_releases(plan, found):
    """``(releases, refusal)``: the plan's releases with the chart's PodMonitor on or off as the cluster decides.

    ``found`` is what the PodMonitor CRD's read found. The chart renders its
    PodMonitor only when Helm sees the monitoring.coreos.com/v1 API, without
    a word otherwise: the role decides here instead (monitoring/monitors.py).
    A release without metrics (``gitlab_runner_metrics`` false) is left as it is.
    """
    wanted, refusal = monitors_wanted(plan["pod_monitors"], found)
    if refusal:
        return [], refusal
    releases = []
    for release in plan["releases"]:
        metrics = release["values"].get("metrics")
        if isinstance(metrics, dict) and isinstance(metrics.get("podMonitor"), dict):
            release = copy.deepcopy(release)
            release["values"]["metrics"]["podMonitor"]["enabled"] = wanted
        releases.append(release)
    return releases, ""


def _readback_reads(settings, selector):
    """What verification reads after a converge: the ConfigMaps the chart rendered, and the managers,
    waited for until Available."""
    namespace = settings["gitlab_runner_namespace"]
    return [
        read(GROUP, "configmaps", "ConfigMap", namespace=namespace, label_selectors=[selector]),
        read(GROUP, "managers", "Deployment", "apps/v1", namespace=namespace, label_selectors=[selector],
             wait=True, wait_condition=AVAILABLE, wait_timeout=int(settings["gitlab_runner_wait_timeout"]),
             hidden_fields=["spec"]),
    ]


def _created_pools(settings):
    """Names of the present pools the inventory gives no token: the role creates their runner."""
    return [pool["name"] for pool in settings[POOLS]
            if pool.get("state", "present") == "present" and not pool.get("token")]


def _with_defaults(pool, settings):
    """The pool with the role's values of the keys it leaves unset.

    The role's ``concurrent`` comes as an integer (``-e`` gives a string of
    digits), and only when it is one: a bad one is the role variable's
    problem, reported once, not each pool's.
    """
    public = {key: value for key, value in pool.items() if key not in GITLAB_SECRET_KEYS}
    defaults = {key: settings[variable] for key, variable in GITLAB_POOL_DEFAULTS.items() if key != "concurrent"}
    concurrent = role_concurrent(settings)
    if concurrent is not None:
        defaults["concurrent"] = concurrent
    return {"state": "present", **defaults, **public}


def _pool_labels(labels, pool):
    return {**labels, POOL_LABEL: pool["name"]}


def _release(pool, config, labels, settings):
    return {
        "name": release_name(pool["name"]),
        "namespace": settings["gitlab_runner_namespace"],
        "state": "present",
        "chart": CHART,
        "chart_version": settings["gitlab_runner_chart_version"],
        "chart_repo_url": settings["gitlab_runner_chart_repo_url"],
        "chart_path": settings.get("gitlab_runner_chart_path") or None,
        "timeout": settings["gitlab_runner_wait_timeout"],
        "values": release_values(pool, config, labels, settings),
    }


def release_values(pool, config, labels, settings):
    """The chart's values for one pool.

    RBAC and the ServiceAccount are the role's own objects (labelled, least
    privilege, in the job namespace), so the chart creates neither; the token
    reaches the chart only as the Secret's name.
    """
    pool_labels = _pool_labels(labels, pool)
    pod_labels = dict(pool_labels, **({GPU_CLASS_LABEL: pool["gpu_class"]} if pool.get("gpu_class") else {}))
    values = {
        "gitlabUrl": pool["gitlab_url"],
        "concurrent": pool["concurrent"],
        "rbac": {"create": False},
        "serviceAccount": {"create": False, "name": release_name(pool["name"])},
        "runners": {
            # The chart passes --name to `gitlab-runner register` only when
            # runners.name is set. Without it the runner is named after the
            # manager pod's hostname: register starts from the hostname and its
            # merge of config.toml never overrides a value already set.
            "name": pool["name"],
            "secret": token_secret_name(pool["name"]),
            "config": config,
        },
        "resources": copy.deepcopy(pool.get("resources") or settings["gitlab_runner_manager_resources"]),
        "readinessProbe": dict(READINESS_PROBE),
        "deploymentLabels": pool_labels,
        "podLabels": pod_labels,
    }
    values.update(_scaling(pool.get("hpa")))
    if settings.get(METRICS, True):
        values["metrics"] = _metrics(pool_labels, settings)
    return deep_merge(values, settings.get("gitlab_runner_extra_values") or {})


def _metrics(pool_labels, settings):
    """The manager's metrics server, and the chart's PodMonitor of it (on or off: ``pod_monitor_releases``).

    The PodMonitor carries the user's selection labels and the pool's; its
    relabelings give each target the labels the alert rules read.
    """
    return {
        "enabled": True,
        "portName": METRICS_PORT_NAME,
        "port": METRICS_PORT,
        "podMonitor": {
            "enabled": False,
            "labels": dict(monitor_labels(settings, POD_MONITOR_LABELS), **pool_labels),
            "relabelings": scrape_relabelings(POOL_LABEL, GPU_CLASS_LABEL),
        },
    }


def _scaling(hpa):
    """One manager, or the chart's HorizontalPodAutoscaler on CPU."""
    if hpa is None:
        return {"replicas": 1}
    target = {"type": "Utilization",
              "averageUtilization": hpa.get("target_cpu_utilization", HPA_DEFAULT_CPU_UTILIZATION)}
    return {"hpa": {"minReplicas": hpa.get("min_replicas", HPA_DEFAULT_MIN_REPLICAS),
                    "maxReplicas": hpa["max_replicas"],
                    "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": target}}]}}


def _access(pool, labels, settings):
    """The pool's runner manager identity and what it may do in the job namespace."""
    name = release_name(pool["name"])
    manager_namespace = settings["gitlab_runner_namespace"]
    pool_labels = _pool_labels(labels, pool)
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount",
         "metadata": {"name": name, "namespace": manager_namespace, "labels": pool_labels,
                      "annotations": {JOB_NAMESPACE_ANNOTATION: pool["namespace"]}}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
         "metadata": {"name": name, "namespace": pool["namespace"], "labels": pool_labels},
         "rules": copy.deepcopy(settings["gitlab_runner_job_rbac_rules"])},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
         "metadata": {"name": name, "namespace": pool["namespace"], "labels": pool_labels},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
         "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": manager_namespace}]},
    ]
