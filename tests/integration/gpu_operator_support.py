# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the gpu_operator tests read from the testbed, and a throw-away inventory.

Other engineers' tests share the testbed, so "the cluster is unchanged" is
checked on the objects this role could touch, not on a full snapshot.
"""
from __future__ import annotations


import time

import yaml
from kubernetes.client.rest import ApiException

from helpers import Cluster

NAMESPACE = "gpu-operator-it"
RELEASE = "gpu-operator-it"
DEVICE_PLUGIN_LABEL = "nvidia.com/device-plugin.config"
MARKER_LABEL = "gpuci.runners/time-slicing"
OUR_SELECTOR = ("app.kubernetes.io/part-of=gpuci-runners,app.kubernetes.io/component=gpu-operator,"
                f"app.kubernetes.io/instance={RELEASE}")
CHART_CRDS = ("clusterpolicies.nvidia.com", "nvidiadrivers.nvidia.com", "nodefeatures.nfd.k8s-sigs.io")
NAMESPACED_KINDS = (("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "ServiceAccount"), ("apps/v1", "Deployment"),
                    ("apps/v1", "DaemonSet"), ("rbac.authorization.k8s.io/v1", "Role"))
CLUSTER_KINDS = (("node.k8s.io/v1", "RuntimeClass"), ("rbac.authorization.k8s.io/v1", "ClusterRole"),
                 ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"))


def role_objects(cluster: Cluster) -> dict[tuple[str, str], str]:
    """(kind, name) -> resourceVersion of what our release (role or chart) may create.

    Cluster-scoped objects count when they belong to our release, so another
    engineer's GPU Operator on the shared testbed does not make this flaky.
    """
    objects: dict[tuple[str, str], str] = {}
    namespace = cluster.get("v1", "Namespace", NAMESPACE)
    if namespace:
        objects[("Namespace", NAMESPACE)] = namespace["metadata"]["resourceVersion"]
        for api_version, kind in NAMESPACED_KINDS:
            for item in cluster.list(api_version, kind, namespace=NAMESPACE):
                objects[(kind, item["metadata"]["name"])] = item["metadata"]["resourceVersion"]
    for api_version, kind in CLUSTER_KINDS:
        for item in cluster.list(api_version, kind):
            if _ours(item):
                objects[(kind, item["metadata"]["name"])] = item["metadata"]["resourceVersion"]
    for policy in cluster_policies(cluster):
        if _ours(policy):
            objects[("ClusterPolicy", policy["metadata"]["name"])] = policy["metadata"]["resourceVersion"]
    for gpu_cluster in gpu_clusters(cluster):
        if _ours(gpu_cluster):
            objects[("GPUCluster", gpu_cluster["metadata"]["name"])] = gpu_cluster["metadata"]["resourceVersion"]
    for node in cluster.core.list_node(label_selector=f"{MARKER_LABEL}={RELEASE}").items:
        objects[("NodeLabel", node.metadata.name)] = node.metadata.labels.get(DEVICE_PLUGIN_LABEL, "")
    return objects


def _ours(item: dict) -> bool:
    """Made by the role (our labels) or by our Helm release (Helm's annotations)."""
    meta = item["metadata"]
    labels, annotations = meta.get("labels") or {}, meta.get("annotations") or {}
    return (labels.get("app.kubernetes.io/instance") == RELEASE and labels.get("app.kubernetes.io/part-of") == "gpuci-runners"
            or annotations.get("meta.helm.sh/release-name") == RELEASE)


def foreign_operator(cluster: Cluster) -> str | None:
    """Which other GPU Operator release owns the cluster's ClusterPolicy or GPUCluster, if any."""
    for found in cluster_policies(cluster) + gpu_clusters(cluster):
        annotations = found["metadata"].get("annotations") or {}
        if annotations.get("meta.helm.sh/release-name") != RELEASE:
            return f"{annotations.get('meta.helm.sh/release-namespace')}/{annotations.get('meta.helm.sh/release-name')}"
    return None


def cluster_policies(cluster: Cluster) -> list[dict]:
    try:
        return cluster.list("nvidia.com/v1", "ClusterPolicy")
    except Exception:  # the CRD is not installed (yet, or any more)
        return []


def gpu_clusters(cluster: Cluster) -> list[dict]:
    """The GPUClusters (nvidia.com/v1alpha1), the CR of gpu_operator_gpu_allocation: dra."""
    try:
        return cluster.list("nvidia.com/v1alpha1", "GPUCluster")
    except Exception:  # the CRD is not installed (yet, or any more)
        return []


def cluster_policy_spec(cluster: Cluster) -> dict:
    policy = cluster.get("nvidia.com/v1", "ClusterPolicy", "cluster-policy")
    assert policy is not None, "ClusterPolicy cluster-policy is missing"
    return policy["spec"]


def helm_releases(cluster: Cluster) -> list[str]:
    """Names of Helm release records (Secrets owned by Helm) in our namespace."""
    try:
        secrets = cluster.core.list_namespaced_secret(NAMESPACE, label_selector=f"owner=helm,name={RELEASE}")
    except ApiException as err:
        if err.status == 404:
            return []
        raise
    return [s.metadata.name for s in secrets.items]


def time_slicing_replicas(cluster: Cluster, configmap: str) -> dict[str, dict[str, int]]:
    """Device plugin ConfigMap -> {config name: {resource: replicas}} (1 = not shared)."""
    data = cluster.core.read_namespaced_config_map(configmap, NAMESPACE).data
    replicas = {}
    for config_name, text in data.items():
        config = yaml.safe_load(text)
        resources = config.get("sharing", {}).get("timeSlicing", {}).get("resources", [])
        replicas[config_name] = {r["name"]: r["replicas"] for r in resources}
    return replicas


def our_leftovers(cluster: Cluster) -> list[str]:
    """Everything of ours still on the cluster after teardown, as readable strings."""
    left = [f"helm release record {name}" for name in helm_releases(cluster)]
    if cluster.get("v1", "Namespace", NAMESPACE):
        left.append(f"namespace {NAMESPACE}")
    left += [f"RuntimeClass {rc['metadata']['name']}"
             for rc in cluster.list("node.k8s.io/v1", "RuntimeClass", label_selector=OUR_SELECTOR)]
    left += [f"ConfigMap {cm['metadata']['namespace']}/{cm['metadata']['name']}"
             for cm in cluster.list("v1", "ConfigMap", label_selector=OUR_SELECTOR)]
    left += [f"node label on {node.metadata.name}"
             for node in cluster.core.list_node(label_selector=f"{MARKER_LABEL}={RELEASE}").items]
    left += [f"ClusterPolicy {p['metadata']['name']}" for p in cluster_policies(cluster)
             if p["metadata"].get("annotations", {}).get("meta.helm.sh/release-name") == RELEASE]
    # The chart keeps its GPUCluster on uninstall (helm.sh/resource-policy: keep): the role deletes it.
    left += [f"GPUCluster {c['metadata']['name']}" for c in gpu_clusters(cluster) if _ours(c)]
    return left


# The real operator (running on the testbed's real node) reconciles the
# ClusterPolicy into operand DaemonSets; their pods land on the simulated GPU
# nodes only, where no container runs.
def wait_for_operands(cluster, expected: set[str], timeout: float = 180) -> dict[str, dict]:
    """Wait until the ClusterPolicy is ready and the operand DaemonSets named in
    `expected` exist; return every DaemonSet of the namespace by name."""
    deadline = time.monotonic() + timeout
    while True:
        policy = cluster.list("nvidia.com/v1", "ClusterPolicy")
        state = policy[0].get("status", {}).get("state") if policy else None
        daemonsets = {d["metadata"]["name"]: d for d in cluster.list("apps/v1", "DaemonSet", namespace=NAMESPACE)}
        if state == "ready" and expected <= set(daemonsets):
            return daemonsets
        if time.monotonic() > deadline:
            raise AssertionError(f"the operator did not reconcile within {timeout:.0f}s: ClusterPolicy state "
                                 f"{state!r}, DaemonSets {sorted(daemonsets)}")
        time.sleep(3)


def operator_pod(cluster) -> dict:
    pods = cluster.list("v1", "Pod", namespace=NAMESPACE, label_selector="app=gpu-operator")
    assert len(pods) == 1, [p["metadata"]["name"] for p in pods]
    return pods[0]
