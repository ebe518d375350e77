# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The gpu_operator role's plan: what its variables become in the cluster, decided once.

From the role's variables (under their own names) it returns:

- ``release``: the GPU Operator's release with its complete chart values
  (the dedicated variables, then ``gpu_operator_values`` laid over them),
  ready for ``gpuci.runners.helm_releases``;
- ``gpu_allocation``: how the operator hands out GPUs
  (``gpu_operator_gpu_allocation``, the pool key ``gpu_allocation``'s two
  values, gpu/dra.py): ``device_plugin``, the ClusterPolicy's stack, whose
  values are exactly those of the role before the variable existed; or
  ``dra``, the chart's GPUCluster (``gpu_cluster``: its fixed name), which
  deploys NVIDIA's DRA driver for GPUs and the DCGM exporter and no
  ClusterPolicy, the driver through the chart's NVIDIADriver CR
  (``driver.nvidiaDriverCRD``, so ``gpu_operator_driver_enabled`` and
  ``_version`` mean what they meant). The GPUCluster's spec carries no
  container toolkit, CDI, MIG strategy, device plugin or runtime class:
  those variables set otherwise than the DRA path can honour are problems,
  and the role makes no RuntimeClass (no operator toolkit configures its
  handler; DRA job pods name none);
- ``gpu_cluster_label_selectors``: the chart's labels on the GPUCluster
  of this release, by which teardown deletes it (the chart keeps it on
  uninstall);
- ``labels`` and ``label_selectors``: on every object the role makes itself;
  ``namespace_labels``: those plus what Pod Security admission needs to
  admit the operands in a namespace the role creates;
- ``time_slicing``: ``enabled``, the device plugin ConfigMap's ``configmap``
  name and ``data`` (one configuration per class plus ``any``), the
  ``classes`` sliced, the classes whose nodes the role labels
  (``label_classes``) and each class's node selector (``class_selectors``,
  from the same builder as the job pods' patches, so the labelled nodes are
  the ones the pools land on);
- ``node_labels``: the device plugin's config label and the marker that says
  the role set it;
- ``objects``: what the role applies beside the release, complete (the
  time-slicing ConfigMap when time-slicing is on); ``create_only``: what it
  creates when missing and never changes (the RuntimeClass, which the
  operator takes over once it runs);
- ``deployment``, ``cluster_policy``: the chart's fixed names; ``crds``: the
  chart's CRDs (node-feature-discovery's with ``nfd.enabled``), which
  ``gpu_operator_remove_crds`` deletes;
- ``converges``: whether the role installs anything (state present);
- ``dcgm_service_monitor``: what decides whether the operator makes the DCGM
  exporter's ServiceMonitor (``gpu_operator_dcgm_service_monitor``, the
  ServiceMonitor CRD); the converge's decision sets it with
  ``service_monitor_release``;
- ``reads`` and ``readback_reads``: what the role reads, as
  ``gpuci.runners.k8s_reads`` takes it (answers under the group
  ``gpu_operator``), to decide what a converge would change, and after a
  converge to verify it;
- ``problems``: settings the role cannot act on, each naming the variables
  at fault: ``gpu_operator_values`` keys that would silently override a
  dedicated variable, a version for a component the operator does not
  install, the operator's toolkit on a cluster whose GPU hosts manage their
  own (``gpu_operator_host_toolkit_hosts``, from those hosts' variables),
  MIG pools without the ``mixed`` strategy, time-slicing for a class no
  pool uses (the runner roles' pools and scale sets come in
  ``gpu_operator_runner_pools``, each source a list or a dict keyed by
  name); with ``dra``: what only the device plugin's stack reads
  (time-slicing, a MIG strategy, the operator's toolkit, CDI off, the wait
  for nodes advertising ``nvidia.com/gpu``) and pools that still ask the
  device plugin; ``warnings``: keys upstream removed.

Whether the cluster serves ``resource.k8s.io`` (Kubernetes 1.34 for v1)
is not checked here, offline: the chart refuses the install on a cluster
that does not, and the runner roles' DRA pools check it in their converge.
"""

from __future__ import annotations

import copy

from ansible_collections.gpuci.runners.plugins.module_utils.common.chart_source import check_chart_source
from ansible_collections.gpuci.runners.plugins.module_utils.common.merging import deep_merge
from ansible_collections.gpuci.runners.plugins.module_utils.container_toolkit.runtimes import operator_toolkit_env
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.classes import merged_classes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.dra import DEVICE_CLASS_API, DEVICE_PLUGIN, DRA, GPU_ALLOCATIONS
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.pod_patch import gpu_pod_patch
from ansible_collections.gpuci.runners.plugins.module_utils.gpu.request import resolve_gpu_request
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import (
    ValidationError,
    check_seconds,
    named_item,
    problem,
)
from ansible_collections.gpuci.runners.plugins.module_utils.k8s.reads import AVAILABLE, read
from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.monitors import (
    SERVICE_MONITOR_CRD,
    crd_read,
    monitor_labels,
    monitor_problems,
    monitor_spec,
    monitors_wanted,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.ownership_labels import label_selectors, ownership_labels
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.pending_changes import release_record_selectors
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.time_slicing import (
    DEFAULT_CONFIG,
    DEFAULT_RESOURCE,
    time_slicing_config,
)
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import require_mapping

CHART = "gpu-operator"
# The group of the role's reads in k8s_reads' answer (site.yml reads for every role at once).
GROUP = "gpu_operator"
# Fixed names in the chart (not derived from the release name).
DEPLOYMENT = "gpu-operator"
CLUSTER_POLICY = "cluster-policy"
CLUSTER_POLICY_API_VERSION = "nvidia.com/v1"
GPU_CLUSTER = "gpu-cluster"
GPU_CLUSTER_API_VERSION = "nvidia.com/v1alpha1"
CRDS = ("clusterpolicies.nvidia.com", "nvidiadrivers.nvidia.com", "gpuclusters.nvidia.com",
        "computedomains.resource.nvidia.com", "computedomaincliques.resource.nvidia.com")
# From the node-feature-discovery subchart: installed only with nfd.enabled.
NFD_CRDS = ("nodefeatures.nfd.k8s-sigs.io", "nodefeaturegroups.nfd.k8s-sigs.io", "nodefeaturerules.nfd.k8s-sigs.io")
# Operands mount host paths and run privileged.
NAMESPACE_LABELS = {"pod-security.kubernetes.io/enforce": "privileged"}
DEVICE_PLUGIN_LABEL = "nvidia.com/device-plugin.config"
# Marks the nodes whose device plugin label the role set: it only ever removes its own.
NODE_MARKER_LABEL = "gpuci.runners/time-slicing"

ALLOCATION = "gpu_operator_gpu_allocation"
DRA_DRIVER_VERSION = "gpu_operator_dra_driver_version"
# The one MIG strategy that is no choice of the user's under DRA: the role's default.
DRA_MIG_STRATEGY = "single"

SERVICE_MONITOR = "gpu_operator_dcgm_service_monitor"
SERVICE_MONITOR_LABELS = "gpu_operator_dcgm_service_monitor_labels"
DCGM_POD_LABELS = "gpu_operator_dcgm_pod_labels"

# Values keys a dedicated variable sets: the same key in gpu_operator_values
# would silently win over the variable.
OWNED_VALUES = (
    ("driver", "enabled", "gpu_operator_driver_enabled"),
    ("driver", "version", "gpu_operator_driver_version"),
    ("toolkit", "enabled", "gpu_operator_toolkit_enabled"),
    ("toolkit", "version", "gpu_operator_toolkit_version"),
    ("cdi", "enabled", "gpu_operator_cdi_enabled"),
    ("mig", "strategy", "gpu_operator_mig_strategy"),
    ("dcgmExporter", "enabled", "gpu_operator_dcgm_exporter_enabled"),
    ("dcgmExporter", "enablePodLabels", DCGM_POD_LABELS),
    ("dcgmExporter", "podLabelAllowlistRegex", DCGM_POD_LABELS),
    ("nfd", "enabled", "gpu_operator_nfd_enabled"),
    ("devicePlugin", "config", "gpu_operator_time_slicing"),
    ("operator", "runtimeClass", "gpu_operator_runtime_class"),
    ("clusterPolicy", "deployCR", ALLOCATION),
    ("gpuCluster", "deployCR", ALLOCATION),
    ("draDriver", "version", DRA_DRIVER_VERSION),
)
# Values keys upstream dropped: harmless, but they do nothing.
REMOVED_VALUES = (
    ("operator", "defaultRuntime",
     "removed in v25.3; the operator detects the runtime, and toolkit env (gpu_operator_container_runtime) moves its paths"),
    ("cdi", "default", "a no-op since v25.10; CDI is always the default mode when cdi.enabled is true"),
)


def gpu_operator_plan(settings, gpu_classes=None):
    """See the module docstring. ``settings``: the role's gpu_operator_* variables."""
    require_mapping(settings, "gpu_operator_plan")
    # Helm's wait and the read-back's, whatever the state: refused naming the variable, not by int().
    timeout = check_seconds(settings, "gpu_operator_wait_timeout")
    if settings.get("gpu_operator_state", "present") == "present":
        check_chart_source("gpu_operator", settings)
    allocation = _allocation(settings)
    release_name = settings["gpu_operator_release_name"]
    labels = ownership_labels({"app.kubernetes.io/component": CHART, "app.kubernetes.io/instance": release_name})
    slicing = _time_slicing(settings, gpu_classes)
    user_values = settings.get("gpu_operator_values") or {}
    selector, record_selectors = label_selectors(labels), release_record_selectors([release_name])
    values = deep_merge(deep_merge(_base_values(settings, slicing), _allocation_values(settings, allocation)), user_values)
    return {
        "gpu_allocation": allocation,
        "labels": labels,
        "label_selectors": selector,
        "namespace_labels": {**labels, **NAMESPACE_LABELS},
        "release": {
            "name": release_name,
            "namespace": settings["gpu_operator_namespace"],
            "state": "present",
            "chart": CHART,
            "chart_version": settings["gpu_operator_chart_version"],
            "chart_repo_url": settings["gpu_operator_chart_repo_url"],
            "chart_path": settings.get("gpu_operator_chart_path") or None,
            "values": values,
            "wait": True,
            "timeout": timeout,
            # Check mode's offline render of a first install knows no cluster's APIs: the chart's DRA check needs this.
            **({"offline_api_versions": [DEVICE_CLASS_API]} if allocation == DRA else {}),
        },
        "time_slicing": slicing,
        "objects": [_time_slicing_configmap(settings, slicing, labels)] if slicing["enabled"] else [],
        "create_only": [_runtime_class(settings, labels)] if allocation == DEVICE_PLUGIN else [],
        "node_labels": {"config": DEVICE_PLUGIN_LABEL, "marker": NODE_MARKER_LABEL},
        "deployment": DEPLOYMENT,
        "cluster_policy": CLUSTER_POLICY,
        "gpu_cluster": GPU_CLUSTER,
        "gpu_cluster_label_selectors": _chart_label_selectors(release_name),
        "crds": list(CRDS + (NFD_CRDS if settings["gpu_operator_nfd_enabled"] else ())),
        "release_record_selectors": record_selectors,
        "converges": settings.get("gpu_operator_state", "present") == "present",
        "dcgm_service_monitor": _service_monitor(settings),
        "reads": _reads(settings, selector, record_selectors) + _monitor_reads(settings),
        "readback_reads": _readback_reads(settings, timeout, allocation),
        "problems": ["gpu_operator_values.%s.%s would override %s; set %s instead." % (section, key, variable, variable)
                     for section, key, variable in OWNED_VALUES if key in (user_values.get(section) or {})]
        + _component_problems(settings) + _host_toolkit_problems(settings)
        + _pool_problems(settings, slicing["classes"], allocation) + _monitoring_problems(settings)
        + (_dra_problems(settings, user_values, gpu_classes) if allocation == DRA else _device_plugin_problems(settings)),
        "warnings": ["gpu_operator_values.%s.%s is %s; the chart ignores it." % (section, key, note)
                     for section, key, note in REMOVED_VALUES if key in (user_values.get(section) or {})],
    }


def _dcgm_exporter(settings):
    """The DCGM exporter's values: its ServiceMonitor (on or off: ``service_monitor_release``) honours the
    exporter's own ``pod``, ``namespace`` and ``container``, which attribute a GPU to the CI job pod holding it
    (the alert rules read them); the job pods' labels the allowlist names become labels of its metrics."""
    enabled = bool(settings["gpu_operator_dcgm_exporter_enabled"])
    if not enabled:
        return {"enabled": False}
    values = {"enabled": True,
              "serviceMonitor": {"enabled": False, "honorLabels": True,
                                 "additionalLabels": monitor_labels(settings, SERVICE_MONITOR_LABELS)}}
    allowlist = list(settings.get(DCGM_POD_LABELS) or [])
    if allowlist:
        values.update({"enablePodLabels": True, "podLabelAllowlistRegex": allowlist})
    return values


def _service_monitor(settings):
    """What decides whether the operator makes the DCGM exporter's ServiceMonitor: off without the exporter."""
    return monitor_spec(settings, SERVICE_MONITOR, SERVICE_MONITOR_CRD,
                        wanted=bool(settings["gpu_operator_dcgm_exporter_enabled"]))


def _monitor_reads(settings):
    """The ServiceMonitor CRD, unless the DCGM exporter's monitor is off."""
    if _service_monitor(settings)["mode"] == "off":
        return []
    return [crd_read(GROUP, "service_monitor_crd", SERVICE_MONITOR_CRD)]


def _monitoring_problems(settings):
    problems = monitor_problems(settings, SERVICE_MONITOR, SERVICE_MONITOR_LABELS, "gpu_operator_dcgm_exporter_enabled",
                                settings["gpu_operator_dcgm_exporter_enabled"], "there is no exporter to monitor")
    allowlist = settings.get(DCGM_POD_LABELS)
    if allowlist is not None and (not isinstance(allowlist, list)
                                  or not all(isinstance(entry, str) and entry for entry in allowlist)):
        problems.append(problem(DCGM_POD_LABELS, "must be a list of regular expressions (strings)", allowlist))
    return problems


def service_monitor_release(plan, found):
    """``(release, refusal)``: the plan's release with the DCGM exporter's ServiceMonitor on or off as the cluster
    decides; ``found`` is what the ServiceMonitor CRD's read found. The operator makes the ServiceMonitor, from
    the ClusterPolicy, only when asked: the role asks only where the CRD exists."""
    wanted, refusal = monitors_wanted(plan["dcgm_service_monitor"], found)
    if refusal:
        return None, refusal
    release = copy.deepcopy(plan["release"])
    monitor = release["values"].get("dcgmExporter", {}).get("serviceMonitor")
    if isinstance(monitor, dict):
        monitor["enabled"] = wanted
    return release, ""


def _time_slicing_configmap(settings, slicing, labels):
    """The device plugin's time-slicing configurations, in the operator's namespace."""
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": slicing["configmap"], "namespace": settings["gpu_operator_namespace"], "labels": labels},
            "data": slicing["data"]}


def _runtime_class(settings, labels):
    """The RuntimeClass the job pods name: the operator creates it once it runs (and never on a simulated
    cluster), so the role provides it until then."""
    name = settings["gpu_operator_runtime_class"]
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name, "labels": labels},
            "handler": name}


def _reads(settings, selector, record_selectors):
    """What the role decides from, in one k8s_reads run: the ClusterPolicy and the GPUClusters (another
    release's? the other way of handing out GPUs than the one asked for?), our namespace, time-slicing
    ConfigMap and RuntimeClass, the nodes (their labels), Helm's record of the release and the operator
    Deployment (its status).

    Only what the role reads is kept: every task that names the answer pays for its size.
    """
    namespace = settings["gpu_operator_namespace"]
    return [
        read(GROUP, "policy", "ClusterPolicy", CLUSTER_POLICY_API_VERSION, name=CLUSTER_POLICY),
        # Every GPUCluster, whatever its name: the operator reconciles one, and
        # none may sit beside a ClusterPolicy (owner.py).
        read(GROUP, "gpu_cluster", "GPUCluster", GPU_CLUSTER_API_VERSION),
        read(GROUP, "namespace", "Namespace", name=namespace),
        read(GROUP, "configmaps", "ConfigMap", namespace=namespace, label_selectors=selector),
        read(GROUP, "nodes", "Node", hidden_fields=["spec", "status"]),
        read(GROUP, "runtime_class", "RuntimeClass", "node.k8s.io/v1", name=settings["gpu_operator_runtime_class"]),
        read(GROUP, "release_records", "Secret", namespace=namespace, helm_releases=True,
             label_selectors=record_selectors),
        read(GROUP, "deployment", "Deployment", "apps/v1", name=DEPLOYMENT, namespace=namespace,
             hidden_fields=["spec"]),
    ]


def _readback_reads(settings, timeout, allocation):
    """What verification reads after a converge: the operator Deployment, waited for until Available,
    then the ClusterPolicy it reconciles; with DRA, also the GPUCluster (and the ClusterPolicy, which must
    not be there)."""
    reads = [
        read(GROUP, "deployment", "Deployment", "apps/v1", name=DEPLOYMENT, namespace=settings["gpu_operator_namespace"],
             wait=True, wait_condition=AVAILABLE, wait_timeout=timeout,
             hidden_fields=["spec"]),
        read(GROUP, "policy", "ClusterPolicy", CLUSTER_POLICY_API_VERSION, name=CLUSTER_POLICY),
    ]
    if allocation == DRA:
        reads.append(read(GROUP, "gpu_cluster", "GPUCluster", GPU_CLUSTER_API_VERSION))
    return reads


def _chart_label_selectors(release_name):
    """The labels the chart puts on its GPUCluster (templates/gpucluster.yaml, gpu-operator.labels)."""
    return ["app.kubernetes.io/instance=%s" % release_name, "app.kubernetes.io/managed-by=Helm",
            "app.kubernetes.io/component=%s" % CHART]


def _component_problems(settings):
    """A version for a component the operator does not install would be silently ignored."""
    return ["gpu_operator_%s_version is set while the %s is disabled (gpu_operator_%s_enabled is false): the "
            "operator does not install it, so the version would be ignored. Host packages are pinned by the "
            "container_toolkit role (container_toolkit_version)." % (component, component, component)
            for component in ("driver", "toolkit")
            if settings.get("gpu_operator_%s_version" % component)
            and not settings.get("gpu_operator_%s_enabled" % component)]


def _host_toolkit_problems(settings):
    """The operator's toolkit would fight the one GPU hosts manage themselves (the container_toolkit role)."""
    hosts = settings.get("gpu_operator_host_toolkit_hosts") or []
    if not settings.get("gpu_operator_toolkit_enabled") or not hosts:
        return []
    return ["gpu_operator_toolkit_enabled is true, but the GPU hosts %s (group %s) manage their own container toolkit "
            "(container_toolkit_version is set for them). Set gpu_operator_toolkit_enabled: false, or stop managing "
            "the toolkit on these hosts." % (", ".join(hosts), settings.get("gpu_operator_host_group"))]


def _runner_pools(sources):
    """The runner roles' pools and scale sets: each source a list, or a dict keyed by name."""
    pools = []
    for source in sources or []:
        entries = source.values() if isinstance(source, dict) else source if isinstance(source, list) else []
        pools += [entry for entry in entries if isinstance(entry, dict)]
    return pools


def _pool_problems(settings, sliced_classes, allocation):
    """MIG and time-slicing against the pools of gitlab_runner_pools and arc_runners_scale_sets.

    With DRA the MIG strategy means nothing (_dra_problems): the DRA driver publishes MIG devices whatever it
    says, so MIG pools need no ``mixed``.
    """
    pools = _runner_pools(settings.get("gpu_operator_runner_pools"))
    problems = []
    mig_pools = [str(pool.get("name", "(unnamed)")) for pool in pools if pool.get("mig_profile")]
    strategy = settings.get("gpu_operator_mig_strategy")
    if mig_pools and strategy != "mixed" and allocation == DEVICE_PLUGIN:
        problems.append("gpu_operator_mig_strategy is %s, but the pools %s use mig_profile: their jobs request "
                        "nvidia.com/mig-<profile>, which the device plugin advertises only with "
                        "gpu_operator_mig_strategy: mixed." % (strategy, ", ".join(mig_pools)))
    used = list(dict.fromkeys(str(pool["gpu_class"]) for pool in pools if pool.get("gpu_class")))
    unused = [name for name in sliced_classes if name not in used]
    if pools and unused:
        problems.append("gpu_operator_time_slicing sets replicas for %s, but no pool in gitlab_runner_pools or "
                        "arc_runners_scale_sets uses that class (pools use: %s)." % (", ".join(unused), ", ".join(used)))
    return problems


def _allocation(settings):
    """``gpu_operator_gpu_allocation``: device_plugin (also when a caller of the plan does not say) or dra."""
    allocation = settings.get(ALLOCATION)
    if allocation is None:
        return DEVICE_PLUGIN
    if allocation not in GPU_ALLOCATIONS:
        raise ValidationError(ALLOCATION, "must be one of %s" % ", ".join(GPU_ALLOCATIONS), allocation)
    return allocation


def _allocation_values(settings, allocation):
    """The chart values of the way GPUs are handed out: none for the device plugin, whose values stay exactly
    what they were before the variable existed (the chart's defaults deploy the ClusterPolicy).

    For DRA: the GPUCluster instead of the ClusterPolicy (the chart refuses both), NVIDIA's DRA driver at
    ``gpu_operator_dra_driver_version`` (the chart's when empty), and an operator-managed driver through the
    NVIDIADriver CR (the chart's default one, ``default``, from ``driver.*``), which the chart requires for a
    GPUCluster: the GPUCluster itself installs no driver.
    """
    if allocation != DRA:
        return {}
    values = {"clusterPolicy": {"deployCR": False}, "gpuCluster": {"deployCR": True}}
    if settings["gpu_operator_driver_enabled"]:
        values["driver"] = {"nvidiaDriverCRD": {"enabled": True}}
    if settings.get(DRA_DRIVER_VERSION):
        values["draDriver"] = {"version": settings[DRA_DRIVER_VERSION]}
    return values


def _device_plugin_problems(settings):
    """A DRA driver version without the DRA driver would be silently ignored."""
    if not settings.get(DRA_DRIVER_VERSION):
        return []
    return ["%s is set while %s is %s: the operator deploys no DRA driver then, so the version would be ignored. "
            "Set %s: %s, or leave the version empty." % (DRA_DRIVER_VERSION, ALLOCATION, DEVICE_PLUGIN, ALLOCATION, DRA)]


def _dra_problems(settings, user_values, gpu_classes):
    """What the DRA path cannot honour, each naming its variables.

    The GPUCluster's spec (crds/nvidia.com_gpuclusters.yaml) carries the DRA
    driver, DCGM, the DCGM exporter, host paths and DaemonSet settings, and
    nothing of the device plugin's stack: no container toolkit, no CDI
    switch, no MIG strategy, no device plugin (so no time-slicing and no
    ``nvidia.com/gpu`` on the nodes).
    """
    why = "with %s: %s the operator deploys a GPUCluster, which " % (ALLOCATION, DRA)
    problems = []
    if settings.get("gpu_operator_toolkit_enabled"):
        problems.append("gpu_operator_toolkit_enabled is true, but %shas no container toolkit (its spec carries none): "
                        "the DRA driver hands GPUs to containers as CDI devices, which the hosts' container runtime "
                        "injects itself (containerd 1.7+ with CDI on, CRI-O). Set gpu_operator_toolkit_enabled: false "
                        "(a host toolkit, if you want one, is the container_toolkit role's)." % why)
    if not settings.get("gpu_operator_cdi_enabled"):
        problems.append("gpu_operator_cdi_enabled is false, but %shands every GPU out by CDI: CDI cannot be turned "
                        "off there. Set gpu_operator_cdi_enabled: true." % why)
    strategy = settings.get("gpu_operator_mig_strategy")
    if strategy != DRA_MIG_STRATEGY:
        problems.append("gpu_operator_mig_strategy is %s, but only the device plugin and GPU Feature Discovery read "
                        "it, and %sdeploys neither: the DRA driver publishes every MIG device (DeviceClass "
                        "mig.nvidia.com) whatever it says. Leave gpu_operator_mig_strategy at %s."
                        % (strategy, why, DRA_MIG_STRATEGY))
    if settings.get("gpu_operator_time_slicing"):
        problems.append("gpu_operator_time_slicing is set, but time-slicing is the device plugin's, and %sdeploys no "
                        "device plugin. Remove gpu_operator_time_slicing, or keep %s: %s."
                        % (why, ALLOCATION, DEVICE_PLUGIN))
    if settings.get("gpu_operator_wait_for_gpu_nodes"):
        problems.append("gpu_operator_wait_for_gpu_nodes is true, but it waits for nodes advertising nvidia.com/gpu, "
                        "which only the device plugin puts there, and %sdeploys none: the wait could never end. "
                        "Set gpu_operator_wait_for_gpu_nodes: false." % why)
    crd = ((user_values.get("driver") or {}).get("nvidiaDriverCRD") or {})
    if settings.get("gpu_operator_driver_enabled") and crd.get("enabled") is False:
        problems.append("gpu_operator_values.driver.nvidiaDriverCRD.enabled is false, but %sinstalls no driver: "
                        "with gpu_operator_driver_enabled the operator installs it through the NVIDIADriver CR, "
                        "which the chart then requires. Remove the key, or set gpu_operator_driver_enabled: false "
                        "(drivers preinstalled on the hosts)." % why)
    device_plugin_pools = _device_plugin_pools(settings, gpu_classes)
    if device_plugin_pools:
        problems.append("%s is %s, but the pools %s ask for their GPUs through the device plugin (gpu_allocation: "
                        "%s, the default), which the GPUCluster does not deploy: nothing would advertise the resource "
                        "their jobs request. Set gpu_allocation: %s on them."
                        % (ALLOCATION, DRA, ", ".join(device_plugin_pools), DEVICE_PLUGIN, DRA))
    return problems


def _device_plugin_pools(settings, gpu_classes):
    """The names of the runner pools and scale sets whose GPU (gpu_access cuda) comes from the device plugin.

    Entries the runner roles refuse anyway (an unknown class, a bad key) are theirs to report, not counted.
    """
    try:
        classes = merged_classes(gpu_classes)
    except ValidationError:
        return []
    names = []
    for index, pool in enumerate(_runner_pools(settings.get("gpu_operator_runner_pools"))):
        if pool.get("gpu_class") is None:
            continue
        try:
            request = resolve_gpu_request(pool, classes, named_item("pools", pool, index))
        except ValidationError:
            continue
        if request.gpu_access == "cuda" and request.claim is None:
            names.append(str(pool.get("name", "(unnamed)")))
    return names


def _time_slicing(settings, gpu_classes):
    replicas = settings.get("gpu_operator_time_slicing") or {}
    require_mapping(replicas, "gpu_operator_time_slicing")
    # Class keys only: not `any`, not device plugin resources such as nvidia.com/gpu.
    classes = [key for key in replicas if key != DEFAULT_CONFIG and "/" not in str(key)]
    # `any: 1` (no sharing) unless the `any` configuration's GPUs are set, by
    # `any` or by their resource name: unlabelled nodes then get a valid default.
    defaults = {} if DEFAULT_CONFIG in replicas or DEFAULT_RESOURCE in replicas else {DEFAULT_CONFIG: 1}
    data = time_slicing_config({**defaults, **replicas}, gpu_classes, path="gpu_operator_time_slicing") \
        if replicas else {}
    return {
        "enabled": bool(replicas),
        "configmap": settings["gpu_operator_time_slicing_configmap"],
        "data": data,
        "classes": classes,
        "label_classes": classes if settings.get("gpu_operator_time_slicing_label_nodes", True) else [],
        "class_selectors": {name: gpu_pod_patch({"gpu_class": name}, gpu_classes, path="gpu_operator_time_slicing.%s" % name)
                            ["nodeSelector"] for name in classes},
    }


def _base_values(settings, slicing):
    """The chart values the dedicated variables set."""
    driver = {"enabled": bool(settings["gpu_operator_driver_enabled"])}
    if settings.get("gpu_operator_driver_version"):
        driver["version"] = settings["gpu_operator_driver_version"]
    toolkit = {"enabled": bool(settings["gpu_operator_toolkit_enabled"]),
               "env": operator_toolkit_env(settings["gpu_operator_container_runtime"])}
    if settings.get("gpu_operator_toolkit_version"):
        toolkit["version"] = settings["gpu_operator_toolkit_version"]
    return {
        "driver": driver,
        "toolkit": toolkit,
        "cdi": {"enabled": bool(settings["gpu_operator_cdi_enabled"])},
        "mig": {"strategy": settings["gpu_operator_mig_strategy"]},
        "dcgmExporter": _dcgm_exporter(settings),
        "nfd": {"enabled": bool(settings["gpu_operator_nfd_enabled"])},
        "operator": {"runtimeClass": settings["gpu_operator_runtime_class"]},
        "devicePlugin": {"config": {"name": slicing["configmap"], "default": DEFAULT_CONFIG} if slicing["enabled"]
                         else {"name": "", "default": ""}},
    }
