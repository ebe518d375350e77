# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The arc_runners role's plan: what its controller and scale sets become in the cluster, decided once.

From the role's variables (under their own names, as the preflight filter
takes them, scale sets without their credentials) it returns:

- ``controller_wanted``: install the controller: when asked
  (``arc_runners_controller_enabled``), or, unset, when scale sets are declared;
- ``scale_sets``: every scale set with the role's defaults filled in;
- ``namespaces``: the namespaces the present controller and scale sets need;
- ``controller``: the controller's release (``None`` when not wanted);
- ``releases``: one gha-runner-scale-set release per present scale set, with
  its complete values (pod template, container mode, credentials Secret's
  name, the controller's service account), ready for
  ``gpuci.runners.helm_releases``;
- ``configmaps``: the hook template ConfigMaps of kubernetes-mode scale sets;
- ``claim_templates``: per present scale set that asks for DRA
  (``gpu_allocation: dra``), its ResourceClaimTemplate ``<name>-gpu`` in the
  scale set's namespace, labelled like its ConfigMap (gpu/dra_pools.py),
  applied with the ConfigMaps: the runner pod names it (container modes
  none and dind), or the job pod of kubernetes mode does (its hook
  template); ``dra_needs``: the DeviceClass each of those claims names,
  which the converge's decision checks against the cluster before anything
  changes;
- ``secrets``: per present scale set whose credentials the role keeps, the
  Secret's name, namespace and labels (the credentials never pass through here);
- ``removed``: the scale sets to remove (marked absent, or all of them with
  ``arc_runners_state: absent``), and ``removals``: their releases in state
  absent for ``helm_releases``;
- ``removed_selectors``: per namespace of removed scale sets, the label
  selectors of the Secrets, ConfigMaps and ResourceClaimTemplates the role
  made for them;
- ``namespace_labels``: on the namespaces the role creates (so it may delete
  them; a namespace that existed before never gets them), and
  ``namespace_selectors``: the same as ``k8s_info`` takes them;
- ``scale_set_label``: the label that ties a Secret, ConfigMap or ResourceClaimTemplate to its scale set;
- ``scale_set_name_label``: the label ARC puts on a scale set's own objects;
- ``crds``: the controller chart's CRDs, which ``arc_runners_remove_crds`` deletes;
- ``by_scale_set``: per present scale set, what pruning and verification
  compare with: its ``namespace``, its credentials Secret's name (``secret``, ``owns_secret``),
  its hook ConfigMap's name (``hook_configmap``, or None) and pod ``template``;
- ``chart_paths``: the local charts (``controller``, ``scale_set``) when
  ``arc_runners_chart_path`` is set, else None;
- ``converges``: whether the role installs anything (state present, with
  the controller or a scale set to install), and ``notes``: that nothing of
  ARC is declared, when the role is present and does not converge;
- ``pod_monitors`` and ``monitors``: what decides whether the role makes
  its PodMonitors of the controller and the listeners
  (``arc_runners_pod_monitors``, the PodMonitor CRD), and those PodMonitors;
  the converge's decision calls ``monitor_changes``; ``monitor_selectors``
  find them (pruning, removal). The controller's metrics are on unless
  ``arc_runners_metrics`` is false;
- ``reads`` and ``readback_reads``: what the role reads, as
  ``gpuci.runners.k8s_reads`` takes it (answers under the group
  ``arc_runners``), to decide what a converge would change, and after a
  converge to verify it;
- ``problems``: settings the role cannot act on, each naming its variable:
  chart values in ``arc_runners_scale_set_values`` the role builds itself,
  a missing or misplaced ``arc_runners_controller_service_account``, and an
  ``arc_runners_chart_path`` without both charts (checked on the controller).
  Every per-scale-set rule of arc_runners/preflight.py runs on the scale
  sets as the inventory wrote them (credentials included: only which are
  set is read), and what each pod template holds is checked as the plan
  renders it, once (arc_runner_template.scale_set_templates); when a rule is
  broken, the plan is only ``problems``, in the order the inventory names them.

The role applies it: controller first (its chart brings the CRDs), then every
scale set's objects and releases at once.
"""

from __future__ import annotations

import copy
import os

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.runner_template import scale_set_templates
from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.preflight import CREDENTIAL_KEYS, SCALE_SETS, scale_set_problems
from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.readback import named_secret_key
from ansible_collections.gpuci.runners.plugins.module_utils.common.chart_source import check_chart_source
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import RESOURCE_API_VERSION
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra_pools import (
    CLAIM_TEMPLATE_KIND,
    claim_templates,
    device_class_needs,
    dra_reads,
    entry_claims,
)
from ansible_collections.gpuci.runners.plugins.module_utils.k8s.reads import read
from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.monitors import (
    MONITORING_API,
    POD_MONITOR_CRD,
    crd_read,
    metrics_switch_problems,
    monitor_labels,
    monitor_problems,
    monitor_spec,
    monitors_wanted,
    pod_monitor,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.ownership_labels import label_selectors, ownership_labels, set_selector
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.pending_changes import release_record_selectors
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import mapping_list, require_mapping

CONTROLLER_CHART = "gha-runner-scale-set-controller"
SCALE_SET_CHART = "gha-runner-scale-set"
# Which scale set a Secret, hook ConfigMap or claim template belongs to, so stale ones can be found.
SCALE_SET_LABEL = "gpuci.runners/arc-scale-set"
# The label ARC's chart and controller put on a scale set's own objects.
SCALE_SET_NAME_LABEL = "actions.github.com/scale-set-name"
# On the namespaces the role creates, beside the collection's labels.
NAMESPACE_LABELS = ownership_labels({"gpuci.runners/created-by": "arc_runners"})
# Selects the objects the collection made itself (the role's Secrets and ConfigMaps carry its labels).
OWNED_SELECTORS = label_selectors(ownership_labels())
# The group of the role's reads in k8s_reads' answer (site.yml reads for every role at once).
GROUP = "arc_runners"
# Said when the role is present and the inventory declares nothing of ARC.
NOTHING_DECLARED = ("arc_runners_scale_sets is empty and arc_runners_controller_enabled is unset: nothing of ARC to "
                    "install (set arc_runners_controller_enabled true for the controller alone).")
RUNNER_SET_API = "actions.github.com/v1alpha1"
CRDS = ("autoscalingrunnersets.actions.github.com", "autoscalinglisteners.actions.github.com",
        "ephemeralrunnersets.actions.github.com", "ephemeralrunners.actions.github.com")
# The controller chart names its service account like its Deployment.
CONTROLLER_SUFFIX = "gha-rs-controller"
DEFAULT_WORK_VOLUME_ACCESS_MODES = ["ReadWriteOnce"]
# The controller chart's metrics values as ARC documents them: the controller
# and every listener serve /metrics on :8080, in a container port named
# "metrics" (the chart's deployment.yaml; the controller's listener pods,
# resourcebuilder.go).
METRICS_VALUES = {"controllerManagerAddr": ":8080", "listenerAddr": ":8080", "listenerEndpoint": "/metrics"}
METRICS_PORT_NAME = "metrics"
METRICS = "arc_runners_metrics"
POD_MONITORS = "arc_runners_pod_monitors"
POD_MONITOR_LABELS = "arc_runners_pod_monitor_labels"
# On the role's PodMonitors: what finds them to prune and remove.
MONITOR_LABEL = "gpuci.runners/monitors"
MONITOR_LABELS = ownership_labels({MONITOR_LABEL: "arc-runners"})
# Which pods each PodMonitor scrapes: the controller chart's manager pod, and
# the listener pods the controller makes (both in the controller's namespace).
CONTROLLER_POD_LABELS = {"app.kubernetes.io/part-of": "gha-rs-controller",
                         "app.kubernetes.io/component": "controller-manager"}
LISTENER_POD_LABELS = {"app.kubernetes.io/component": "runner-scale-set-listener"}
# Scale set chart values the role builds from each scale set; arc_runners_scale_set_values may not set them.
OWNED_SCALE_SET_VALUES = ("githubConfigUrl", "githubConfigSecret", "controllerServiceAccount", "template",
                          "containerMode", "scaleSetLabels", "runnerGroup", "runnerScaleSetName", "minRunners",
                          "maxRunners")


def controller_fullname(release_name):
    """The controller chart's fullname: the release name with -gha-rs-controller unless already in it."""
    name = release_name if CONTROLLER_SUFFIX in release_name else release_name + "-" + CONTROLLER_SUFFIX
    return name[:63].rstrip("-")


def controller_wanted(settings, scale_sets):
    enabled = settings.get("arc_runners_controller_enabled")
    return bool(enabled) if enabled is not None else len(scale_sets) > 0


def arc_runners_plan(settings, gpu_classes=None):
    """The role's plan (see the module docstring), or only its ``problems`` when a scale set breaks a rule."""
    require_mapping(settings, "arc_runners_plan")
    scale_sets = [_with_defaults(entry, settings) for entry in mapping_list(settings, SCALE_SETS)]
    role_present = settings.get("arc_runners_state", "present") == "present"
    # Each scale set's pod template is rendered once: its rules are checked
    # as it is made, and the template goes into the scale set's release.
    templates, template_problems = (
        scale_set_templates(scale_sets, gpu_classes, settings.get("arc_runners_runtime_class"), SCALE_SETS)
        if role_present else ({}, {}))
    problems = scale_set_problems(settings, template_problems)
    if problems:
        return {"problems": problems}
    wanted = controller_wanted(settings, scale_sets)
    present = [(index, s) for index, s in enumerate(scale_sets) if role_present and s["state"] == "present"]
    if role_present and (wanted or present):
        check_chart_source("arc_runners", settings)
    account = settings.get("arc_runners_controller_service_account") or {
        "name": controller_fullname(settings["arc_runners_controller_release_name"]),
        "namespace": settings["arc_runners_controller_namespace"]}
    releases, configmaps, secrets, by_scale_set = [], [], [], {}
    for index, scale_set in present:
        rendered = templates[index]
        labels = ownership_labels({SCALE_SET_LABEL: scale_set["name"]})
        secret_name = scale_set.get("github_config_secret") or scale_set["name"] + "-github-config"
        if not scale_set.get("github_config_secret"):
            secrets.append({"scale_set": scale_set["name"], "name": secret_name,
                            "namespace": scale_set["namespace"], "labels": labels})
        hook = rendered["hook_template"]
        by_scale_set[scale_set["name"]] = {"namespace": scale_set["namespace"], "secret": secret_name,
                                           "owns_secret": not scale_set.get("github_config_secret"),
                                           "hook_configmap": hook["configmap_name"] if hook else None,
                                           "template": rendered["template"]}
        if hook is not None:
            configmaps.append({"apiVersion": "v1", "kind": "ConfigMap",
                               "metadata": {"name": hook["configmap_name"], "namespace": scale_set["namespace"],
                                            "labels": labels},
                               "data": hook["data"]})
        releases.append(_chart_release(settings, scale_set["name"], scale_set["namespace"], SCALE_SET_CHART,
                                       scale_set_values(scale_set, rendered["template"], secret_name, account,
                                                        settings.get("arc_runners_scale_set_values") or {})))
    controller = None
    if role_present and wanted:
        values = copy.deepcopy(settings.get("arc_runners_controller_values") or {})
        if settings.get(METRICS, True):
            # The user's own metrics values, where given, are theirs.
            values.setdefault("metrics", dict(METRICS_VALUES))
        values.setdefault("serviceAccount", {}).update({"create": True, "name": account["name"]})
        controller = _chart_release(settings, settings["arc_runners_controller_release_name"],
                                    settings["arc_runners_controller_namespace"], CONTROLLER_CHART, values)
    removed = [s for s in scale_sets if not role_present or s["state"] == "absent"]
    # Every scale set, the removed ones too: their releases are pending while they exist.
    record_selectors = release_record_selectors(
        [settings["arc_runners_controller_release_name"]] + [s["name"] for s in scale_sets])
    charts = {"controller": chart_path(settings, CONTROLLER_CHART), "scale_set": chart_path(settings, SCALE_SET_CHART)}
    named_secrets = _named_secret_reads(by_scale_set)
    # Without a live controller the chart's objects keep their cleanup
    # finalizers, so waiting for them would only time out: with
    # arc_runners_force_finalizers the role releases them itself afterwards.
    wait = not settings.get("arc_runners_force_finalizers", False)
    removals = [{"name": s["name"], "namespace": s["namespace"], "state": "absent", "wait": wait,
                 "timeout": settings["arc_runners_wait_timeout"]} for s in removed]
    namespaces = ([settings["arc_runners_controller_namespace"]] if controller else []) + [
        s["namespace"] for _index, s in present]
    claims = entry_claims([s for _index, s in present], gpu_classes, SCALE_SETS)
    return {
        "controller_wanted": wanted,
        "scale_sets": scale_sets,
        "namespaces": list(dict.fromkeys(namespaces)),
        "controller": controller,
        "releases": releases,
        "configmaps": configmaps,
        "claim_templates": claim_templates(claims, lambda s: ownership_labels({SCALE_SET_LABEL: s["name"]})),
        "dra_needs": device_class_needs(claims),
        "secrets": secrets,
        "removed": removed,
        "removals": removals,
        "removed_selectors": _removed_selectors(removed),
        "namespace_labels": NAMESPACE_LABELS,
        "namespace_selectors": label_selectors(NAMESPACE_LABELS),
        "scale_set_label": SCALE_SET_LABEL,
        "scale_set_name_label": SCALE_SET_NAME_LABEL,
        "crds": list(CRDS),
        "release_record_selectors": record_selectors,
        "by_scale_set": by_scale_set,
        "chart_paths": charts,
        "converges": role_present and (wanted or bool(scale_sets)),
        "notes": [NOTHING_DECLARED] if role_present and not (wanted or scale_sets) else [],
        "pod_monitors": _pod_monitors(settings, controller),
        "monitors": _monitors(settings, controller),
        "monitor_selectors": label_selectors(MONITOR_LABELS),
        "reads": _reads(record_selectors) + named_secrets + _monitor_reads(settings, controller) + dra_reads(GROUP, claims),
        "readback_reads": [read(GROUP, "runner_sets", "AutoscalingRunnerSet", RUNNER_SET_API)] + named_secrets,
        "problems": (_problems(settings, wanted, wanted or bool(scale_sets), charts) + _monitoring_problems(settings))
        if role_present else [],
    }


def _monitoring_problems(settings):
    """The metrics and monitor variables' problems: a bad mode or labels, monitors on without metrics."""
    return metrics_switch_problems(settings, METRICS) + monitor_problems(
        settings, POD_MONITORS, POD_MONITOR_LABELS, METRICS, settings.get(METRICS, True),
        "a PodMonitor needs the metrics")


def _pod_monitors(settings, controller):
    """What decides whether the role makes its PodMonitors: off without a controller of its own or metrics."""
    return monitor_spec(settings, POD_MONITORS, POD_MONITOR_CRD,
                        wanted=bool(controller) and bool(settings.get(METRICS, True)))


def _monitors(settings, controller):
    """The PodMonitors of the controller and of the listeners, in the controller's namespace.

    ARC's metrics carry their own ``name`` (the scale set), ``namespace`` and
    ``repository``...: the listeners' scrape honours them
    (``honorLabels``), as the alert rules read them. Labelled with the
    user's selection labels and the role's own (MONITOR_LABELS), by which
    pruning and removal find them.
    """
    if _pod_monitors(settings, controller)["mode"] == "off":
        return []
    namespace = controller["namespace"]
    labels = dict(monitor_labels(settings, POD_MONITOR_LABELS), **MONITOR_LABELS)
    return [
        pod_monitor("gpuci-arc-controller", namespace, labels,
                    dict(CONTROLLER_POD_LABELS, **{"app.kubernetes.io/instance": controller["name"]}), METRICS_PORT_NAME),
        pod_monitor("gpuci-arc-listeners", namespace, labels, LISTENER_POD_LABELS, METRICS_PORT_NAME,
                    path=METRICS_VALUES["listenerEndpoint"], honor_labels=True),
    ]


def _monitor_reads(settings, controller):
    """The role's PodMonitors (an unserved kind answers none), so those no longer wanted are pruned, and the
    PodMonitor CRD unless monitors are off."""
    crd = [] if _pod_monitors(settings, controller)["mode"] == "off" else [
        crd_read(GROUP, "pod_monitor_crd", POD_MONITOR_CRD)]
    return crd + [read(GROUP, "pod_monitors", "PodMonitor", MONITORING_API,
                       namespace=settings["arc_runners_controller_namespace"],
                       label_selectors=label_selectors(MONITOR_LABELS))]


def monitor_changes(plan, found):
    """``(monitors, stale, refusal)``: the PodMonitors to apply, ours the cluster holds that are no longer wanted,
    and why the run must stop ('' for no reason).

    ``found(key)`` answers the plan's reads. ``arc_runners_pod_monitors``
    and the PodMonitor CRD decide (monitoring/monitors.py); ``on`` without
    the CRD is refused.
    """
    wanted, refusal = monitors_wanted(plan["pod_monitors"], found("pod_monitor_crd"))
    if refusal:
        return [], [], refusal
    monitors = copy.deepcopy(plan["monitors"]) if wanted else []
    names = {(monitor["metadata"]["namespace"], monitor["metadata"]["name"]) for monitor in monitors}
    stale = [{"apiVersion": MONITORING_API, "kind": "PodMonitor",
              "metadata": {"name": live["metadata"]["name"], "namespace": live["metadata"]["namespace"]}}
             for live in found("pod_monitors")
             if (live["metadata"].get("namespace"), live["metadata"]["name"]) not in names]
    return monitors, stale, ""


def _removed_selectors(removed):
    """Per namespace (in the scale sets' order), what selects our Secrets, ConfigMaps and ResourceClaimTemplates of
    its removed scale sets."""
    names = {}
    for scale_set in removed:
        names.setdefault(scale_set["namespace"], []).append(scale_set["name"])
    return [{"namespace": namespace,
             "label_selectors": OWNED_SELECTORS + [set_selector(SCALE_SET_LABEL, in_namespace)]}
            for namespace, in_namespace in names.items()]


def _reads(record_selectors):
    """What the role decides from, in one k8s_reads run: the namespaces, our Secrets, hook ConfigMaps and
    claim templates (which pruning may remove), Helm's records of the releases (the removed scale sets' too: they are
    pending while they exist) and the AutoscalingRunnerSets."""
    ours = OWNED_SELECTORS + [SCALE_SET_LABEL]
    return [
        read(GROUP, "namespaces", "Namespace"),
        read(GROUP, "secrets", "Secret", label_selectors=ours),
        read(GROUP, "configmaps", "ConfigMap", label_selectors=ours),
        # Read on every run, so a scale set that left DRA has its template pruned. On a cluster without
        # resource.k8s.io/v1, k8s_info answers api_found false and nothing, no error.
        read(GROUP, "claim_templates", CLAIM_TEMPLATE_KIND, RESOURCE_API_VERSION, label_selectors=ours),
        read(GROUP, "release_records", "Secret", helm_releases=True, label_selectors=record_selectors),
        # Empty until the controller chart has installed ARC's CRDs. Whether
        # they exist is told by the controller's release record instead
        # (pending_changes' crds_from): reading the CRD meant fetching and
        # decoding its 600 KB schema on every run.
        read(GROUP, "runner_sets", "AutoscalingRunnerSet", RUNNER_SET_API),
    ]


def _named_secret_reads(by_scale_set):
    """Each Secret a scale set names (github_config_secret), which the user makes (or another scale set's
    Secret): verification needs it to exist, before and after a converge. Only its existence counts: its
    data stays out of the answer."""
    return [read(GROUP, named_secret_key(name), "Secret", name=entry["secret"], namespace=entry["namespace"],
                 hidden_fields=["data", "stringData"])
            for name, entry in by_scale_set.items() if not entry["owns_secret"]]


def _problems(settings, wanted, planned, charts):
    owned = [key for key in OWNED_SCALE_SET_VALUES if key in (settings.get("arc_runners_scale_set_values") or {})]
    problems = ["arc_runners_scale_set_values may not set %s: the role builds them from each scale set."
                % ", ".join(owned)] if owned else []
    account = settings.get("arc_runners_controller_service_account") or {}
    namespace = settings["arc_runners_controller_namespace"]
    complete = bool(account.get("name")) and bool(account.get("namespace"))
    misplaced = wanted and account and account.get("namespace") != namespace
    if planned and ((not wanted and not account) or (account and not complete) or misplaced):
        problems.append("arc_runners_controller_service_account must name the service account of the controller "
                        "(name and namespace): it is required when arc_runners_controller_enabled is false, and when "
                        "the role installs the controller its namespace must be arc_runners_controller_namespace "
                        "(%s)." % namespace)
    paths = [charts["controller"], charts["scale_set"]]
    # A file check on the controller, where helm_releases reads local charts.
    if planned and settings.get("arc_runners_chart_path") and not all(os.path.isfile(path) for path in paths):
        problems.append("arc_runners_chart_path %s must hold %s." % (
            settings["arc_runners_chart_path"], " and ".join(os.path.basename(path) for path in paths)))
    return problems


def _with_defaults(entry, settings):
    public = {key: value for key, value in entry.items() if key not in CREDENTIAL_KEYS}
    defaults = {"namespace": settings["arc_runners_scale_set_namespace"], "state": "present",
                "container_mode": "none", "labels": []}
    return {**defaults, **public}


def chart_path(settings, chart):
    """arc_runners_chart_path is a directory holding both charts, packaged as helm pull names them."""
    folder = settings.get("arc_runners_chart_path") or ""
    return "%s/%s-%s.tgz" % (folder, chart, settings["arc_runners_chart_version"]) if folder else None


def _chart_release(settings, name, namespace, chart, values):
    return {"name": name, "namespace": namespace, "state": "present", "chart": chart,
            "chart_version": settings["arc_runners_chart_version"],
            "chart_repo_url": settings["arc_runners_chart_repo_url"], "chart_path": chart_path(settings, chart),
            "timeout": settings["arc_runners_wait_timeout"], "values": values}


def scale_set_values(scale_set, template, secret_name, account, extra_values):
    """The gha-runner-scale-set chart's values; the user's extra values never override what the role builds
    (preflight refuses them)."""
    values = copy.deepcopy(extra_values)
    values.update({
        "githubConfigUrl": scale_set["github_config_url"],
        "githubConfigSecret": secret_name,
        "controllerServiceAccount": dict(account),
        "scaleSetLabels": list(scale_set["labels"]),
        "template": template,
    })
    for key, value_key in (("runner_group", "runnerGroup"), ("min_runners", "minRunners"),
                           ("max_runners", "maxRunners")):
        if scale_set.get(key) not in (None, ""):
            values[value_key] = scale_set[key]
    if scale_set["container_mode"] != "none":
        values["containerMode"] = _container_mode(scale_set)
    return values


def _container_mode(scale_set):
    if scale_set["container_mode"] == "dind":
        return {"type": "dind"}
    claim = scale_set.get("work_volume_claim") or {}
    volume = {"accessModes": claim.get("access_modes") or list(DEFAULT_WORK_VOLUME_ACCESS_MODES),
              "resources": {"requests": {"storage": claim["size"]}}}
    if claim.get("storage_class"):
        volume["storageClassName"] = claim["storage_class"]
    return {"type": "kubernetes", "kubernetesModeWorkVolumeClaim": volume}
