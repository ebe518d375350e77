# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the arc_runners tests read from the testbed and build from it.

ARC's controller never really runs here (kwok runs no containers), so no
listener and no runner is ever created. The tests build the pods the
controller and the Kubernetes container hook would build, from what the API
server holds, and let the real scheduler place them.
"""
from __future__ import annotations

import copy
import subprocess
import time

import yaml
from kubernetes.client.rest import ApiException

from helpers import Cluster, decode_helm_record, kubectl_binary

PREFIX = "arc-runners-it"
CONTROLLER_NAMESPACE = f"{PREFIX}-system"
CONTROLLER_RELEASE = PREFIX
RUNNERS_NAMESPACE = PREFIX
K8S_MODE_NAMESPACE = f"{PREFIX}-k8s"
NAMESPACES = (CONTROLLER_NAMESPACE, RUNNERS_NAMESPACE, K8S_MODE_NAMESPACE)
ARC_GROUP = "actions.github.com"
ARS = (f"{ARC_GROUP}/v1alpha1", "AutoscalingRunnerSet")
ARC_CRDS = tuple(f"{plural}.{ARC_GROUP}" for plural in
                 ("autoscalingrunnersets", "autoscalinglisteners", "ephemeralrunnersets", "ephemeralrunners"))
OURS = "app.kubernetes.io/part-of=gpuci-runners"
RESOURCE_API = "resource.k8s.io/v1"
# The DeviceClasses of NVIDIA's DRA driver chart, by the device type each selects.
DEVICE_CLASSES = {"gpu.nvidia.com": "gpu", "mig.nvidia.com": "mig"}
# Made by the tests only where the testbed has none, and removed by them again.
TEST_LABEL = "gpuci.runners/test=arc-runners-dra"
NAMESPACED_KINDS = (("v1", "Secret"), ("v1", "ConfigMap"), ("v1", "ServiceAccount"), ("v1", "Pod"),
                    ("apps/v1", "Deployment"), ("rbac.authorization.k8s.io/v1", "Role"),
                    ("rbac.authorization.k8s.io/v1", "RoleBinding"), (RESOURCE_API, "ResourceClaimTemplate"))
CLUSTER_KINDS = (("rbac.authorization.k8s.io/v1", "ClusterRole"), ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"))
# The k8s hook names the job container "job"; a hook template addresses it as "$job".
JOB_CONTAINER = "job"
HOOK_PREFIX = "$"


def role_objects(cluster: Cluster) -> dict[tuple[str, str, str], str]:
    """(kind, namespace, name) -> resourceVersion of all the role or its charts may create.

    Other engineers' tests share the testbed, so "unchanged" is checked on
    these objects rather than on a full snapshot. ARC's CRDs are left out:
    other installations on the testbed may create them at any time.
    """
    objects: dict[tuple[str, str, str], str] = {}
    kinds = NAMESPACED_KINDS + ((ARS,) if arc_crds(cluster) else ())
    for namespace in NAMESPACES:
        found = cluster.get("v1", "Namespace", namespace)
        if not found:
            continue
        objects[("Namespace", "", namespace)] = found["metadata"]["resourceVersion"]
        for api_version, kind in kinds:
            for item in cluster.list(api_version, kind, namespace=namespace):
                objects[(kind, namespace, item["metadata"]["name"])] = item["metadata"]["resourceVersion"]
    for api_version, kind in CLUSTER_KINDS:
        for item in cluster.list(api_version, kind):
            if item["metadata"]["name"].startswith(PREFIX):
                objects[(kind, "", item["metadata"]["name"])] = item["metadata"]["resourceVersion"]
    return objects


def arc_crds(cluster: Cluster) -> list[dict]:
    return [crd for crd in cluster.list("apiextensions.k8s.io/v1", "CustomResourceDefinition")
            if crd["metadata"]["name"] in ARC_CRDS]


def helm_releases(cluster: Cluster, namespace: str) -> dict[str, dict]:
    """Release name -> the decoded latest Helm release record (values under "config")."""
    releases: dict[str, dict] = {}
    for secret in cluster.list("v1", "Secret", namespace=namespace, label_selector="owner=helm"):
        record = decode_helm_record(secret["data"]["release"])
        name = record["name"]
        if name not in releases or record["version"] > releases[name]["version"]:
            releases[name] = record
    return releases


def runner_pod(runner_set: dict, name: str) -> dict:
    """The runner pod ARC's controller would create from an AutoscalingRunnerSet.

    The `work` volume of kubernetes mode is an ephemeral claim; the testbed
    has no storage provisioner, so an emptyDir stands in for it.
    """
    spec = copy.deepcopy(runner_set["spec"]["template"]["spec"])
    spec["volumes"] = [{"name": "work", "emptyDir": {}} if volume["name"] == "work" else volume
                       for volume in spec.get("volumes", [])]
    return _pod(name, runner_set["metadata"]["namespace"], spec)


def job_pod(hook_template_yaml: str, name: str, namespace: str) -> dict:
    """The job pod the Kubernetes container hook would create with this hook template.

    Follows the hook's merge rules (runner-container-hooks, packages/k8s,
    mergePodSpecWithOptions / mergeContainerWithOptions): pod keys replace the
    hook's, volumes are appended, a container named "$job" is merged into the
    job container (env, volumeMounts and ports appended, name and image kept,
    other keys replaced), other containers are added as they are. The hook
    pins the job pod to the runner's node unless told to use the scheduler;
    here the scheduler places it, which is the stronger proof.
    """
    spec = {
        "restartPolicy": "Never",
        "containers": [{"name": JOB_CONTAINER, "image": "nvidia/cuda:12.4.1-base-ubuntu22.04",
                        "command": ["tail", "-f", "/dev/null"],
                        "volumeMounts": [{"name": "work", "mountPath": "/__w"}]}],
        "volumes": [{"name": "work", "emptyDir": {}}],
    }
    extension = yaml.safe_load(hook_template_yaml)["spec"]
    for key, value in extension.items():
        if key == "containers":
            for container in value:
                if container["name"] == HOOK_PREFIX + JOB_CONTAINER:
                    _merge_container(spec["containers"][0], container)
                elif not container["name"].startswith(HOOK_PREFIX):
                    spec["containers"].append(container)
        elif key == "volumes":
            spec["volumes"] += value
        else:
            spec[key] = value
    return _pod(name, namespace, spec)


def _merge_container(base: dict, extension: dict) -> None:
    for key, value in extension.items():
        if key in ("name", "image"):
            continue
        if key in ("env", "volumeMounts", "ports"):
            base[key] = base.get(key, []) + list(value or [])
        else:
            base[key] = value


def _pod(name: str, namespace: str, spec: dict) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "labels": {"app.kubernetes.io/name": PREFIX}},
            "spec": spec}


def without_tolerations(pod: dict, drop_node_selector: bool = False) -> dict:
    """The same pod without its tolerations (and node selector), under another name."""
    pod = copy.deepcopy(pod)
    pod["metadata"]["name"] += "-notol"
    pod["spec"].pop("tolerations", None)
    if drop_node_selector:
        pod["metadata"]["name"] += "-anywhere"
        pod["spec"].pop("nodeSelector", None)
    return pod


def place(cluster: Cluster, pod: dict, timeout: float = 60) -> dict:
    """Create the pod and wait until the scheduler has decided: bound, or unschedulable."""
    cluster.apply_pod(pod)
    return cluster.wait_pod(pod["metadata"]["name"], pod["metadata"]["namespace"], _decided, timeout=timeout)


def _decided(pod: dict) -> bool:
    if pod["spec"].get("nodeName"):
        return True
    return any(c["type"] == "PodScheduled" and c["status"] == "False" and c.get("reason") == "Unschedulable"
               for c in pod["status"].get("conditions") or [])


def delete_pods(cluster: Cluster, pods: list[dict]) -> None:
    for pod in pods:
        try:
            cluster.core.delete_namespaced_pod(pod["metadata"]["name"], pod["metadata"]["namespace"],
                                               grace_period_seconds=0)
        except ApiException as err:
            if err.status != 404:
                raise


def nodes_matching(cluster: Cluster, selector: dict) -> list[str]:
    """Names of the nodes whose labels satisfy a nodeSelector."""
    return sorted(node.metadata.name for node in cluster.core.list_node().items
                  if all((node.metadata.labels or {}).get(k) == v for k, v in selector.items()))


def gpu_requests(pod: dict) -> dict[str, str]:
    """container name -> its nvidia.com/* limits, for containers that have any."""
    found = {}
    for container in pod["spec"]["containers"]:
        limits = (container.get("resources") or {}).get("limits") or {}
        gpu = {k: v for k, v in limits.items() if k.startswith("nvidia.com/")}
        if gpu:
            found[container["name"]] = gpu
    return found


def ensure_runtime_class(cluster: Cluster, name: str = "nvidia") -> bool:
    """Create the RuntimeClass if absent (RuntimeClass admission rejects pods naming a
    missing one); return whether this call created it."""
    if cluster.get("node.k8s.io/v1", "RuntimeClass", name):
        return False
    try:
        cluster.resource("node.k8s.io/v1", "RuntimeClass").create(
            body={"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": name}, "handler": name})
    except ApiException as err:
        if err.status == 409:  # another test created it just now
            return False
        raise
    return True


def delete_runtime_class(cluster: Cluster, name: str = "nvidia") -> None:
    try:
        cluster.resource("node.k8s.io/v1", "RuntimeClass").delete(name=name)
    except ApiException as err:
        if err.status != 404:
            raise


def claim_templates(cluster: Cluster) -> list[dict]:
    """Every ResourceClaimTemplate of ours (the collection's labels), wherever it is."""
    return cluster.list(RESOURCE_API, "ResourceClaimTemplate", label_selector=OURS)


def ensure_device_classes(cluster: Cluster) -> list[str]:
    """The DeviceClasses of NVIDIA's DRA driver, made with kubectl where the testbed lacks them (as the driver's
    chart makes them: a CEL selector on the driver and the device type); returns the names this call made."""
    missing = [name for name in DEVICE_CLASSES if not cluster.get(RESOURCE_API, "DeviceClass", name)]
    key, value = TEST_LABEL.split("=")
    manifests = [{"apiVersion": RESOURCE_API, "kind": "DeviceClass",
                  "metadata": {"name": name, "labels": {key: value}},
                  "spec": {"selectors": [{"cel": {"expression": "device.driver == 'gpu.nvidia.com' && "
                                                                "device.attributes['gpu.nvidia.com'].type == '%s'"
                                                                % DEVICE_CLASSES[name]}}]}}
                 for name in missing]
    if manifests:
        subprocess.run([kubectl_binary(), "--kubeconfig", str(cluster.kubeconfig), "create", "-f", "-"],
                       input=yaml.safe_dump_all(manifests), text=True, check=True, capture_output=True)
    return missing


def delete_device_classes(cluster: Cluster, names: list[str]) -> None:
    """Delete those of ``names`` that ensure_device_classes made (its label), none other."""
    for name in names:
        found = cluster.get(RESOURCE_API, "DeviceClass", name)
        key, value = TEST_LABEL.split("=")
        if found and (found["metadata"].get("labels") or {}).get(key) == value:
            cluster.resource(RESOURCE_API, "DeviceClass").delete(name=name)


def delete_namespace(cluster: Cluster, name: str, timeout: float = 120) -> None:
    """Delete a namespace the test made and wait until it is gone."""
    try:
        cluster.core.delete_namespace(name)
    except ApiException as err:
        if err.status != 404:
            raise
    deadline = time.monotonic() + timeout
    while cluster.get("v1", "Namespace", name) and time.monotonic() < deadline:
        time.sleep(1)
