# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Prometheus alerting rules for GPU CI, built from the inventory's runner pools and scale sets.

Two shapes of the same rules: ``alert_rules`` (a rules file, ``{"groups": [...]}``,
for a Prometheus without the Prometheus Operator) and ``prometheus_rule``
(a ``monitoring.coreos.com/v1`` PrometheusRule with ``spec.groups`` the same).
What each alert means and what to do about it: docs/monitoring.md.

Every metric name and label below was read in the component's own source
(METRICS says where and from which version); a rule that names a metric its
component never exports stays silent forever, which no test would notice.

How a rule finds a pool: GitLab Runner's metrics carry the runner's name,
not our pool. The rules assume the scrape of a runner manager adds the
target labels SCRAPE_LABELS (``job``, ``pool``, ``gpu_class``), relabelled
from the manager pod's labels; the pools' PodMonitors write exactly these
names (their relabelings: monitoring/monitors.py ``scrape_relabelings``). DCGM's ``pod`` and
``namespace`` and ARC's ``name`` are the exporters' own labels, kept only when
the scrape honours them (``honor_labels``; the GPU Operator's
``dcgmExporter.serviceMonitor.honorLabels``): otherwise Prometheus renames
them ``exported_pod``/``exported_namespace`` and the GPU rules find no pod.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from ansible_collections.gpuci.runners.plugins.module_utils.common.ownership_labels import ownership_labels
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    check_str_map,
    item,
    plain,
    required_str,
    require_mapping,
    show,
)

# name: (component, version it exists from, the labels the rules read, where it is defined)
METRICS = {
    "gitlab_runner_jobs": (
        "GitLab Runner", "11.0 (named ci_runner_builds before)",
        "runner, runner_name, system_id, state, stage, executor_stage", "commands/builds_helper.go"),
    "gitlab_runner_concurrent": (
        "GitLab Runner", "11.4", "(none)", "commands/multi.go"),
    "gitlab_runner_failed_jobs_total": (
        "GitLab Runner", "11.0 (ci_runner_failed_jobs_total from 10.4; labels fixed in 16.6, mode since 19.0)",
        "runner, runner_name, failure_reason, mode", "helpers/prometheus/failures_collector.go"),
    "gitlab_runner_job_queue_duration_seconds": (
        "GitLab Runner", "16.4", "runner, runner_name, system_id, project_jobs_running",
        "commands/builds_helper.go"),
    "DCGM_FI_DEV_XID_ERRORS": (
        "DCGM exporter",
        "default counters (4.6.0-4.8.3 in the GPU Operator v26.7.0 chart); pod, namespace with DCGM_EXPORTER_KUBERNETES",
        "gpu, UUID, Hostname, modelName, pod, namespace, container", "etc/default-counters.csv"),
    "DCGM_FI_DEV_GPU_UTIL": (
        "DCGM exporter", "default counters, as above; not reported for MIG instances",
        "gpu, UUID, Hostname, modelName, pod, namespace, container", "etc/default-counters.csv"),
    "gha_desired_runners": (
        "ARC scale set listener", "documented for 0.9; listed in the 0.14.2 chart's listenerMetrics",
        "name, namespace, repository, organization, enterprise", "cmd/ghalistener/metrics/metrics.go"),
    "gha_max_runners": (
        "ARC scale set listener", "documented for 0.9; listed in the 0.14.2 chart's listenerMetrics",
        "name, namespace, repository, organization, enterprise", "cmd/ghalistener/metrics/metrics.go"),
    "up": ("Prometheus", "every version", "job, pool (SCRAPE_LABELS)", "the scrape itself"),
}

# Target labels the scrape of a runner manager must add (see the module docstring;
# monitoring/monitors.py turns them into the pools' PodMonitor relabelings).
SCRAPE_LABELS = {"job": "gpuci-gitlab-runner", "pool": "pool", "gpu_class": "gpu_class"}
GITLAB_JOB = SCRAPE_LABELS["job"]
POOL = SCRAPE_LABELS["pool"]
GPU_CLASS = SCRAPE_LABELS["gpu_class"]
# failure_reason of a job the runner, not the job's script, failed (common/network.go, RunnerSystemFailure).
RUNNER_SYSTEM_FAILURE = "runner_system_failure"

# Every threshold: variable -> (default, kind). The one place the defaults live;
# docs/monitoring.md says why each is what it is.
THRESHOLDS = {
    "gpuci_alert_pool_saturated_ratio": (1.0, "ratio"),
    "gpuci_alert_pool_saturated_for": ("15m", "duration"),
    "gpuci_alert_queue_seconds": (300, "number"),
    "gpuci_alert_queue_quantile": (0.9, "ratio"),
    "gpuci_alert_queue_window": ("15m", "duration"),
    "gpuci_alert_system_failures": (3, "count"),
    "gpuci_alert_system_failures_window": ("30m", "duration"),
    "gpuci_alert_manager_down_for": ("5m", "duration"),
    "gpuci_alert_gpu_idle_percent": (1, "number"),
    "gpuci_alert_gpu_idle_for": ("30m", "duration"),
    "gpuci_alert_scale_set_at_max_for": ("15m", "duration"),
}
# The labels a Prometheus selects PrometheusRules by: kube-prometheus-stack's
# ruleSelector matches release=<its Helm release>, and the chart's own name is
# the release name its docs install it under.
DEFAULT_RULE_LABELS = {"release": "kube-prometheus-stack"}
DEFAULT_RULE_NAMESPACE = "monitoring"
RULE_NAME = "gpuci-runners-alerts"

REGEX_META = re.compile(r"[\\.+*?()|\[\]{}^$]")
DURATION = re.compile(r"^(?:[0-9]+(?:ms|s|m|h|d|w|y))+$")
KIND_TEXT = {
    "number": "a positive number",
    "ratio": "a number above 0 and at most 1",
    "count": "a positive whole number",
    "duration": "a positive duration such as '15m' or a number of seconds",
}


def alert_rules(settings, defaults=None):
    """The rules file: ``{"groups": [...]}``, only the groups the inventory has something for.

    ``settings`` holds the inventory's variables (``gitlab_runner_pools``,
    ``arc_runners_scale_sets``, their roles' namespaces and any
    ``gpuci_alert_*``); ``defaults`` the roles' defaults (a mapping or a list
    of them), read where the inventory sets nothing. Only the variables named
    here are read, and of each pool only its name, state, GPU class and
    namespace: a playbook may hand over its host's variables whole, whose
    tokens then stay untemplated.
    """
    get = _reader(settings, defaults)
    limits = thresholds(get)
    pools = _present(get("gitlab_runner_pools"), "gitlab_runner_pools")
    scale_sets = _present(get("arc_runners_scale_sets"), "arc_runners_scale_sets")
    groups = []
    if pools:
        groups.append({"name": "gpuci-gitlab-runner", "rules": _gitlab_rules(pools, limits)})
    gpu_namespaces = _job_namespaces(pools, "gitlab_runner_namespace", get) | _job_namespaces(
        scale_sets, "arc_runners_scale_set_namespace", get)
    if gpu_namespaces:
        groups.append({"name": "gpuci-gpu", "rules": _gpu_rules(sorted(gpu_namespaces), limits)})
    if scale_sets:
        groups.append({"name": "gpuci-arc-runners", "rules": _arc_rules(scale_sets, limits)})
    return {"groups": groups}


def prometheus_rule(settings, defaults=None):
    """The same groups as a PrometheusRule, labelled for a Prometheus to select."""
    get = _reader(settings, defaults)
    labels = get("gpuci_alert_rule_labels")
    labels = dict(DEFAULT_RULE_LABELS) if labels is None else check_str_map(plain(labels), "gpuci_alert_rule_labels")
    namespace = get("gpuci_alert_rule_namespace", DEFAULT_RULE_NAMESPACE)
    if not isinstance(namespace, str) or not namespace:
        raise ValidationError("gpuci_alert_rule_namespace", "expected a namespace name, got %s" % show(namespace))
    return {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": RULE_NAME, "namespace": str(namespace), "labels": ownership_labels(labels)},
        "spec": alert_rules(settings, defaults),
    }


OUTPUTS = {"rules": alert_rules, "PrometheusRule": prometheus_rule}


def monitoring_alert_rules(settings, kind="rules", defaults=None):
    """``alert_rules`` or ``prometheus_rule``, as ``kind`` (``rules`` or ``PrometheusRule``) asks."""
    if kind not in OUTPUTS:
        raise ValidationError("kind", "expected one of %s, got %s" % (", ".join(OUTPUTS), show(kind)))
    return OUTPUTS[kind](settings, defaults)


def _reader(settings, defaults):
    """``get(name, default)``: the inventory's value, else the roles' default, else ``default``."""
    require_mapping(settings, "settings")
    layers = [settings] + (defaults if isinstance(defaults, list) else [defaults or {}])
    for index, layer in enumerate(layers[1:]):
        require_mapping(layer, item("defaults", index))

    def get(name, default=None):
        for layer in layers:
            if name in layer:
                return layer[name]
        return default

    return get


def thresholds(get):
    """Every threshold, the inventory's value where it sets one; a bad value names its variable."""
    return {name: _checked(name, plain(get(name, default)), kind)
            for name, (default, kind) in THRESHOLDS.items()}


def _checked(name, value, kind):
    if kind == "duration":
        return _duration(name, value)
    number = _number(value)
    fits = number is not None and number > 0 and (
        kind == "number" or (kind == "ratio" and number <= 1) or (kind == "count" and number == int(number)))
    if not fits:
        raise ValidationError(name, "expected %s, got %s" % (KIND_TEXT[kind], show(value)))
    return int(number) if kind == "count" else number


def _number(value):
    """A number, or a string of one as ``-e name=600`` gives it; None for anything else (a bool is no number)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, str):
        try:
            return float(value) if "." in value else int(value)
        except ValueError:
            return None
    return None


def _duration(name, value):
    """A Prometheus duration: a string as Prometheus writes it, or seconds."""
    number = _number(value)
    if number is not None and number > 0 and number == int(number):
        return "%ds" % number
    if isinstance(value, str) and DURATION.match(value) and re.search(r"[1-9]", value):
        return value
    raise ValidationError(name, "expected %s, got %s" % (KIND_TEXT["duration"], show(value)))


def _present(entries, variable):
    """The entries the inventory keeps (state present), each a mapping with a name."""
    if entries is None:
        return []
    if isinstance(entries, (str, bytes)) or not isinstance(entries, Sequence):
        raise ValidationError(variable, "expected a list, got %s" % show(entries))
    present = []
    for index, entry in enumerate(entries):
        require_mapping(entry, item(variable, index))
        name = required_str(entry, "name", item(variable, index))
        if entry.get("state", "present") == "present":
            present.append({"name": name, "gpu_class": plain(entry.get("gpu_class")),
                            "namespace": plain(entry.get("namespace"))})
    return present


def _job_namespaces(entries, role_namespace, get):
    """Where the GPU entries' job pods run: their own namespace, else their role's."""
    namespaces = set()
    for entry in entries:
        if entry["gpu_class"]:
            namespace = entry["namespace"] or plain(get(role_namespace))
            if not isinstance(namespace, str) or not namespace:
                raise ValidationError(role_namespace, "expected the namespace of %s's job pods, got %s"
                                      % (entry["name"], show(namespace)))
            namespaces.add(namespace)
    return namespaces


def _selector(**matchers):
    """``{a="x",b=~"y"}``: a value given as a list becomes a regex matching any of them, exactly."""
    parts = []
    for label, value in matchers.items():
        if isinstance(value, list):
            # RE2's metacharacters escaped, then the backslashes once more for PromQL's string.
            pattern = "|".join(REGEX_META.sub(r"\\\\\g<0>", name) for name in sorted(value))
            parts.append('%s=~"%s"' % (label, pattern))
        else:
            parts.append('%s%s"%s"' % (label, "!=" if value == "" else "=", value))
    return "{%s}" % ",".join(parts)


def _alert(name, expr, severity, summary, description, duration=None, labels=None):
    rule = {"alert": name, "expr": expr}
    if duration:
        rule["for"] = duration
    rule["labels"] = {"severity": severity, **(labels or {})}
    rule["annotations"] = {"summary": summary, "description": description}
    return rule


def _gitlab_rules(pools, limits):
    names = [pool["name"] for pool in pools]
    sel = _selector(job=GITLAB_JOB, pool=names)
    by = "sum by (%s, %s)" % (POOL, GPU_CLASS)
    failures = _selector(job=GITLAB_JOB, pool=names, failure_reason=RUNNER_SYSTEM_FAILURE)
    rules = [
        _alert(
            "GpuciGitlabPoolSaturated",
            "%s (gitlab_runner_jobs%s)\n  / %s (gitlab_runner_concurrent%s)\n>= %s"
            % (by, sel, by, sel, limits["gpuci_alert_pool_saturated_ratio"]),
            "warning", "GitLab pool {{ $labels.pool }} is at its concurrency",
            "Pool {{ $labels.pool }} (GPU class {{ $labels.gpu_class }}) has run at "
            "{{ $value | humanizePercentage }} of its concurrent jobs for %s: new jobs wait for a free slot."
            % limits["gpuci_alert_pool_saturated_for"],
            limits["gpuci_alert_pool_saturated_for"]),
        _alert(
            "GpuciGitlabJobsQueuedTooLong",
            "histogram_quantile(%s,\n  %s (le, %s, %s) (rate(gitlab_runner_job_queue_duration_seconds_bucket%s[%s]))\n) > %s"
            % (limits["gpuci_alert_queue_quantile"], "sum by", POOL, GPU_CLASS, sel,
               limits["gpuci_alert_queue_window"], limits["gpuci_alert_queue_seconds"]),
            "warning", "Jobs of GitLab pool {{ $labels.pool }} wait too long for a runner",
            "The %s quantile of the time jobs picked up by pool {{ $labels.pool }} had waited in GitLab's queue "
            "was {{ $value | humanizeDuration }} over the last %s."
            % (limits["gpuci_alert_queue_quantile"], limits["gpuci_alert_queue_window"])),
        _alert(
            "GpuciGitlabRunnerSystemFailures",
            "%s (increase(gitlab_runner_failed_jobs_total%s[%s])) >= %d"
            % (by, failures, limits["gpuci_alert_system_failures_window"], limits["gpuci_alert_system_failures"]),
            "warning", "GitLab pool {{ $labels.pool }} fails jobs with runner system failures",
            "{{ $value | humanize }} jobs of pool {{ $labels.pool }} failed with runner_system_failure in the "
            "last %s: the runner or the cluster, not the jobs' scripts." % limits["gpuci_alert_system_failures_window"]),
    ]
    for pool in pools:
        up = "up" + _selector(job=GITLAB_JOB, pool=pool["name"])
        rules.append(_alert(
            "GpuciGitlabRunnerManagerDown", "%s == 0 or absent(%s)" % (up, up),
            "critical", "The runner manager of GitLab pool %s is down" % pool["name"],
            "Prometheus has not scraped the runner manager of pool %s for %s (down, or no target at all): the "
            "pool takes no jobs." % (pool["name"], limits["gpuci_alert_manager_down_for"]),
            limits["gpuci_alert_manager_down_for"],
            {GPU_CLASS: pool["gpu_class"]} if pool.get("gpu_class") else None))
    return rules


def _gpu_rules(namespaces, limits):
    return [
        _alert(
            "GpuciGpuXidError", "DCGM_FI_DEV_XID_ERRORS > 0", "critical",
            "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} reported XID {{ $value }}",
            "The GPU {{ $labels.UUID }} ({{ $labels.modelName }}) on node {{ $labels.Hostname }} reported XID "
            "error {{ $value }} (pod {{ $labels.namespace }}/{{ $labels.pod }} held it)."),
        _alert(
            "GpuciGpuIdleInCiJob",
            "DCGM_FI_DEV_GPU_UTIL%s <= %s"
            % (_selector(namespace=namespaces, pod=""), limits["gpuci_alert_gpu_idle_percent"]),
            "warning", "CI job pod {{ $labels.namespace }}/{{ $labels.pod }} holds a GPU it does not use",
            "GPU {{ $labels.gpu }} on {{ $labels.Hostname }} has been at most %s%% busy for %s while the CI job pod "
            "{{ $labels.namespace }}/{{ $labels.pod }} held it."
            % (limits["gpuci_alert_gpu_idle_percent"], limits["gpuci_alert_gpu_idle_for"]),
            limits["gpuci_alert_gpu_idle_for"]),
    ]


def _arc_rules(scale_sets, limits):
    sel = _selector(name=[entry["name"] for entry in scale_sets])
    return [_alert(
        "GpuciArcScaleSetAtMax",
        "max by (name) (gha_desired_runners%s)\n  >= max by (name) (gha_max_runners%s)\n"
        "and max by (name) (gha_max_runners%s) > 0" % (sel, sel, sel),
        "warning", "ARC scale set {{ $labels.name }} is at its maximum of runners",
        "Scale set {{ $labels.name }} has wanted its maximum of runners for %s: more jobs are assigned "
        "than it may start." % limits["gpuci_alert_scale_set_at_max_for"],
        limits["gpuci_alert_scale_set_at_max_for"])]
