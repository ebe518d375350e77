# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Prometheus Operator's monitors of the roles' components, decided once.

Each cluster role exposes its components' metrics and, where the cluster
has the Prometheus Operator's CRD, the monitor that makes a Prometheus
scrape them. A role variable (``gitlab_runner_pod_monitors``,
``arc_runners_pod_monitors``, ``gpu_operator_dcgm_service_monitor``) says
``auto`` (a monitor when the cluster serves its CRD), ``on`` (a monitor,
and no CRD is refused before any change) or ``off``; another
(``*_monitor_labels``) gives the labels the user's Prometheus selects
monitors by (kube-prometheus-stack: ``release: <its Helm release>``).

The plan checks the variables and says what to read (``crd_read``, the
CRD by name, cluster-scoped); the converge's decision, which holds the
read's answer, calls ``monitors_wanted``.

The GitLab runner managers' scrape must give each target the labels the
alert rules read (``SCRAPE_LABELS`` in ``alert_rules.py``):
``scrape_relabelings`` builds them from the managers' pod labels, the one
place they are written.
"""

from __future__ import annotations

import re

from ansible_collections.gpuci.runners.plugins.module_utils.k8s.reads import read
from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.alert_rules import SCRAPE_LABELS
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    check_str_map,
    plain,
    problem,
    problems_of,
    type_name,
)

MODES = ("auto", "on", "off")
DEFAULT_MODE = "auto"
MONITORING_API = "monitoring.coreos.com/v1"
CRD_API = "apiextensions.k8s.io/v1"
POD_MONITOR_CRD = "podmonitors.monitoring.coreos.com"
SERVICE_MONITOR_CRD = "servicemonitors.monitoring.coreos.com"
PROMETHEUS_RULE_CRD = "prometheusrules.monitoring.coreos.com"
# How Prometheus's Kubernetes discovery names a pod's label: every character
# a label name may not hold becomes "_".
_META_POD_LABEL = "__meta_kubernetes_pod_label_"
_NOT_IN_LABEL_NAME = re.compile(r"[^a-zA-Z0-9_]")


def monitor_mode(settings, variable):
    """The mode ``variable`` sets (unset: the default); YAML's bare ``on`` and ``off`` are booleans, and mean the same."""
    value = settings.get(variable, DEFAULT_MODE)
    if isinstance(value, bool):
        return "on" if value else "off"
    return value


def check_mode(settings, variable):
    """Raise ValidationError when ``variable`` sets a mode that is not one of MODES."""
    value = monitor_mode(settings, variable)
    if not (isinstance(value, str) and value in MODES):
        raise ValidationError(variable, "must be one of %s" % ", ".join(MODES), value)


def mode_problems(settings, variable):
    """``[]``, or the problem of a mode variable that is not one of MODES."""
    return problems_of(check_mode, settings, variable)


def labels_problems(settings, variable):
    """``[]``, or the problem of a labels variable that is not a mapping of strings to strings."""
    value = settings.get(variable)
    if value is None:
        return []
    try:
        check_str_map(plain(value), variable)
    except ValidationError as error:
        return [str(error)]
    return []


def monitor_problems(settings, variable, labels_variable, source, source_on, needs):
    """A monitor's variables' problems: a bad mode or labels, and the monitor forced ``on`` while
    ``source`` (the variable that turns on what it scrapes) is off; ``needs`` says why it matters."""
    problems = mode_problems(settings, variable) + labels_problems(settings, labels_variable)
    if monitor_mode(settings, variable) == "on" and not source_on:
        problems.append(problem(variable, "is on, but %s is false: %s" % (source, needs)))
    return problems


def metrics_switch_problems(settings, variable):
    """``[]``, or the problem of a role's metrics switch (default true) that is not a boolean."""
    value = settings.get(variable, True)
    return [] if isinstance(value, bool) else [problem(variable, "must be true or false", value)]


def monitor_labels(settings, variable):
    """The labels of ``variable`` (unset or None: none), after ``labels_problems`` found none."""
    return dict(plain(settings.get(variable) or {}))


def monitor_spec(settings, variable, crd, wanted=True):
    """What the decision needs of a monitor: its variable, mode and CRD; the mode is ``off`` when the role
    exposes no metrics (``wanted`` false)."""
    return {"variable": variable, "mode": monitor_mode(settings, variable) if wanted else "off", "crd": crd}


def crd_read(group, key, crd):
    """The read of one CustomResourceDefinition by name: its answer is empty when the cluster does not have it."""
    return read(group, key, "CustomResourceDefinition", CRD_API, name=crd)


def monitors_wanted(spec, found):
    """``(wanted, refusal)``: whether the monitor is made, and why the run must stop ('' for no reason).

    ``spec`` is ``monitor_spec``'s, ``found`` the resources ``crd_read`` found.
    ``auto`` makes the monitor only where the CRD exists; ``on`` without the
    CRD is refused, naming the variable: the monitor could not be applied.
    """
    refusal = missing_crd(spec, found)
    if refusal:
        return False, str(refusal)
    return monitor_made(spec, found), ""


def monitor_made(spec, found):
    """Whether the monitor is made: ``on``, or ``auto`` where the CRD was found; never ``off``."""
    return spec["mode"] == "on" or (spec["mode"] == "auto" and bool(found))


def missing_crd(spec, found):
    """The ValidationError of a monitor forced ``on`` where the cluster lacks its CRD (``found`` empty), else None."""
    if not isinstance(spec, dict) or spec.get("mode") not in MODES:
        raise ValidationError("monitors_wanted", "expected a monitor_spec, got %s" % type_name(spec))
    if spec["mode"] == "on" and not found:
        return ValidationError(spec["variable"], "is on, but the cluster has no CustomResourceDefinition %s (install "
                               "the Prometheus Operator's CRDs, or set it to auto or off)" % spec["crd"])
    return None


def meta_pod_label(label):
    """The name Prometheus's Kubernetes discovery gives a pod label: ``__meta_kubernetes_pod_label_<sanitised>``."""
    return _META_POD_LABEL + _NOT_IN_LABEL_NAME.sub("_", label)


def scrape_relabelings(pool_label, gpu_class_label):
    """The Prometheus Operator relabelings that give a runner manager's target SCRAPE_LABELS.

    ``job`` is replaced by SCRAPE_LABELS' job; ``pool`` and ``gpu_class`` come
    from the manager pod's labels ``pool_label`` and ``gpu_class_label`` (a
    pod without a GPU class gets none: an empty value is no label).
    """
    return [
        {"action": "replace", "targetLabel": "job", "replacement": SCRAPE_LABELS["job"]},
        {"action": "replace", "sourceLabels": [meta_pod_label(pool_label)], "regex": "(.+)",
         "targetLabel": SCRAPE_LABELS["pool"], "replacement": "$1"},
        {"action": "replace", "sourceLabels": [meta_pod_label(gpu_class_label)], "regex": "(.+)",
         "targetLabel": SCRAPE_LABELS["gpu_class"], "replacement": "$1"},
    ]


def pod_monitor(name, namespace, labels, selector, port, path="/metrics", honor_labels=False, namespaces=None):
    """A PodMonitor of the pods ``selector`` (matchLabels) selects, in ``namespaces`` (default: its own)."""
    endpoint = {"port": port, "path": path}
    if honor_labels:
        endpoint["honorLabels"] = True
    return {
        "apiVersion": MONITORING_API,
        "kind": "PodMonitor",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {"selector": {"matchLabels": dict(selector)},
                 "namespaceSelector": {"matchNames": sorted(set(namespaces or [namespace]))},
                 "podMetricsEndpoints": [endpoint]},
    }
