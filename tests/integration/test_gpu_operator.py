# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/gpu_operator against the testbed, with the real gpu-operator chart.

Two seed setups run the full cycle: check mode (nothing changes), converge,
converge again (no change), the ClusterPolicy the chart rendered and the
time-slicing ConfigMap carry the chosen settings, teardown leaves nothing of
ours. Every preflight contradiction fails before the cluster is touched.

One more setup, gpu_operator_gpu_allocation: dra, runs converge, rerun and
teardown once: the GPUCluster instead of the ClusterPolicy (its docstring says
what is real there).

The operator itself runs for real on the testbed's real node (inventories/local
places it there when its image was provided to the testbed) and reconciles the
ClusterPolicy: the tests read the operand DaemonSets it made. Without the image
it runs on a simulated node, that check is left out and the report says so.
The operands' pods land on the simulated GPU nodes, where no container runs.
"""
from __future__ import annotations

import time

import pytest

from helpers import inventory_with_gpu_hosts
from gpu_operator_support import (
    DEVICE_PLUGIN_LABEL,
    NAMESPACE,
    OUR_SELECTOR,
    RELEASE,
    cluster_policies,
    cluster_policy_spec,
    foreign_operator,
    gpu_clusters,
    helm_releases,
    operator_pod,
    our_leftovers,
    role_objects,
    time_slicing_replicas,
    wait_for_operands,
)
from lib.layout import REAL_NODE  # tools/testbed, put on sys.path by conftest.py

PLAYBOOK = "gpu_operator.yml"
CONFIGMAP = "gpuci-device-plugin-config"
# Pools of the runner roles as an inventory would declare them; the role
# reads them to cross-check MIG and time-slicing.
POOLS = [
    {"name": "l40s", "gpu_class": "l40s"},
    {"name": "a10", "gpu_class": "a10"},
    {"name": "a100-mig", "gpu_class": "a100", "mig_profile": "1g.10gb"},
]
BASE = {"gpu_operator_namespace": NAMESPACE, "gpu_operator_release_name": RELEASE, "gitlab_runner_pools": POOLS}

SETUPS = {
    # Kubeflow / nvkind / AKS: the hosts bring driver and toolkit, CDI off.
    "preinstalled": {
        "gpu_operator_driver_enabled": False,
        "gpu_operator_toolkit_enabled": False,
        "gpu_operator_cdi_enabled": False,
        "gpu_operator_time_slicing": {"a10": 2},
    },
    # Bare GPU nodes: the operator installs a pinned driver and the toolkit,
    # here on rke2 (the toolkit gets rke2's containerd paths).
    "operator-managed": {
        "gpu_operator_driver_enabled": True,
        "gpu_operator_driver_version": "580.105.08",
        "gpu_operator_toolkit_enabled": True,
        "gpu_operator_toolkit_version": "v1.17.8-ubuntu20.04",
        "gpu_operator_cdi_enabled": True,
        "gpu_operator_container_runtime": "rke2",
        "gpu_operator_time_slicing": {"l40s": 4, "any": 2},
    },
}


@pytest.fixture
def operator_slot(testbed):
    """The GPU Operator is one per cluster: wait for another release on the testbed (a concurrent
    developer run) to go. In CI tests run one after another, so one left over is a teardown bug: fail."""
    deadline = time.monotonic() + 300
    while (other := foreign_operator(testbed)) and time.monotonic() < deadline:
        time.sleep(5)
    if other:
        pytest.fail(f"another GPU Operator release ({other}) is still installed after 5 minutes; there can be only one")


def teardown(playbooks, setup):
    return playbooks.run(PLAYBOOK, extra_vars={**BASE, **setup, "gpu_operator_state": "absent"})


# Under helm 4 one setup is enough: both make the same helm calls, with other values.
@pytest.mark.parametrize("name", [pytest.param(name, marks=pytest.mark.helm_agnostic) if name == "preinstalled" else name
                                  for name in SETUPS])
def test_converge_idempotent_and_teardown(testbed, playbooks, operator_slot, real_components, name):
    setup = SETUPS[name]
    extra = {**BASE, **setup}
    assert not our_leftovers(testbed), "a previous run left objects behind"
    torn_down = False
    try:
        before = role_objects(testbed)
        playbooks.run(PLAYBOOK, extra_vars=extra, check=True).assert_ok()
        assert role_objects(testbed) == before, "check mode changed the cluster"
        assert not helm_releases(testbed)

        first = playbooks.run(PLAYBOOK, extra_vars=extra).assert_ok()
        assert first.changed > 0
        second = playbooks.run(PLAYBOOK, extra_vars=extra).assert_ok()
        assert second.changed == 0, f"second run changed something:\n{second.output[-4000:]}"

        spec = cluster_policy_spec(testbed)
        assert spec["driver"]["enabled"] is setup["gpu_operator_driver_enabled"]
        assert spec["toolkit"]["enabled"] is setup["gpu_operator_toolkit_enabled"]
        assert spec["cdi"]["enabled"] is setup["gpu_operator_cdi_enabled"]
        assert spec["mig"]["strategy"] == "mixed"  # inventories/local: the A100 node is split mixed
        assert spec["devicePlugin"]["config"] == {"name": CONFIGMAP, "default": "any"}
        if setup["gpu_operator_driver_enabled"]:
            assert spec["driver"]["version"] == setup["gpu_operator_driver_version"]
        if setup["gpu_operator_toolkit_enabled"]:
            assert spec["toolkit"]["version"] == setup["gpu_operator_toolkit_version"]
            env = {e["name"]: e["value"] for e in spec["toolkit"]["env"]}
            assert env["CONTAINERD_CONFIG"] == "/var/lib/rancher/rke2/agent/etc/containerd/config.toml.tmpl"
            assert env["CONTAINERD_SOCKET"] == "/run/k3s/containerd/containerd.sock"
            assert env["RUNTIME_CONFIG_SOURCE"] == "file=/var/lib/rancher/rke2/agent/etc/containerd/config.toml"

        replicas = time_slicing_replicas(testbed, CONFIGMAP)
        for key, count in setup["gpu_operator_time_slicing"].items():
            assert replicas[key] == {"nvidia.com/gpu": count}
        replicas.setdefault("any", {})  # `any` is always there, unshared unless asked
        sliced_class = next(k for k in setup["gpu_operator_time_slicing"] if k != "any")
        node = {"a10": "gpu-a10-0", "l40s": "gpu-l40s-0"}[sliced_class]
        assert testbed.core.read_node(node).metadata.labels[DEVICE_PLUGIN_LABEL] == sliced_class

        runtime_class = testbed.get("node.k8s.io/v1", "RuntimeClass", "nvidia")
        assert runtime_class and runtime_class["handler"] == "nvidia"
        operator = testbed.apps.read_namespaced_deployment("gpu-operator", NAMESPACE)
        assert operator.status.available_replicas == 1
        if "gpu-operator" in real_components:
            check_the_real_operator(testbed, setup)
        else:
            assert operator_pod(testbed)["spec"]["nodeName"] != REAL_NODE
            real_components.note_simulated("gpu-operator")

        if name == "preinstalled":
            # A second release elsewhere is refused before it creates anything.
            other = {**extra, "gpu_operator_namespace": f"{NAMESPACE}-2", "gpu_operator_release_name": f"{RELEASE}-2"}
            playbooks.run(PLAYBOOK, extra_vars=other).assert_failed_with(
                "there can be only one per cluster", f"Helm release {RELEASE} in namespace {NAMESPACE}")
            assert testbed.get("v1", "Namespace", f"{NAMESPACE}-2") is None

        if name == "operator-managed":
            # Turning time-slicing off removes the ConfigMap and the node labels
            # and unsets devicePlugin.config (a chart upgrade).
            playbooks.run(PLAYBOOK, extra_vars={**extra, "gpu_operator_time_slicing": {}}).assert_ok()
            assert testbed.list("v1", "ConfigMap", namespace=NAMESPACE, label_selector=OUR_SELECTOR) == []
            assert DEVICE_PLUGIN_LABEL not in testbed.core.read_node(node).metadata.labels
            assert "config" not in cluster_policy_spec(testbed)["devicePlugin"]

        gone = teardown(playbooks, setup).assert_ok()
        torn_down = True
        assert gone.changed > 0
        assert our_leftovers(testbed) == []
        assert teardown(playbooks, setup).assert_ok().changed == 0
    finally:
        if not torn_down:
            teardown(playbooks, setup)


# gpu_operator_gpu_allocation: dra, as an inventory would write it: the pools claim their GPUs by DRA too, the
# operator installs a pinned driver through the NVIDIADriver CR and runs no toolkit (the GPUCluster has none).
DRA_SETUP = {
    "gpu_operator_gpu_allocation": "dra",
    "gpu_operator_dra_driver_version": "v0.5.0",
    "gpu_operator_driver_enabled": True,
    "gpu_operator_driver_version": "580.105.08",
    "gpu_operator_toolkit_enabled": False,
    # inventories/local splits the A100 node with mixed, which only the device plugin reads.
    "gpu_operator_mig_strategy": "single",
    "gitlab_runner_pools": [dict(pool, gpu_allocation="dra") for pool in POOLS],
    # inventories/local's scale sets ask the device plugin; this role's test declares none.
    "arc_runners_scale_sets": [],
}


def test_dra_converge_idempotent_and_teardown(testbed, playbooks, operator_slot):
    """gpu_operator_gpu_allocation: dra makes the chart's GPUCluster and no ClusterPolicy; a rerun changes nothing;
    teardown leaves no GPUCluster although the chart keeps it on uninstall.

    Real here: helm installing and uninstalling the real chart (its hooks included), the chart's own checks
    (one CR of the two; the NVIDIADriver CR beside a GPUCluster; the cluster serving resource.k8s.io, asked of
    the real API server), and the API server validating the GPUCluster and the NVIDIADriver against the chart's
    CRDs. Not real: no operator reconciles the GPUCluster (its image is not provided to the testbed, or it runs
    without GPUs), so no DRA driver pods start and no ResourceSlice or DeviceClass comes from it; nothing here
    waits for them, as the device plugin tests wait for no device plugin.
    """
    extra = {**BASE, **DRA_SETUP}
    assert not our_leftovers(testbed), "a previous run left objects behind"
    torn_down = False
    try:
        check = playbooks.run(PLAYBOOK, extra_vars=extra, check=True).assert_ok()
        assert check.changed > 0 and gpu_clusters(testbed) == [], "check mode must make nothing"
        first = playbooks.run(PLAYBOOK, extra_vars=extra).assert_ok()
        assert first.changed > 0
        second = playbooks.run(PLAYBOOK, extra_vars=extra).assert_ok()
        assert second.changed == 0, f"second run changed something:\n{second.output[-4000:]}"

        (gpu_cluster,) = gpu_clusters(testbed)
        metadata = gpu_cluster["metadata"]
        assert metadata["name"] == "gpu-cluster"
        assert metadata["annotations"]["meta.helm.sh/release-name"] == RELEASE
        assert metadata["annotations"]["helm.sh/resource-policy"] == "keep"
        spec = gpu_cluster["spec"]
        assert spec["draDriver"]["version"] == DRA_SETUP["gpu_operator_dra_driver_version"]
        assert spec["dcgmExporter"]["enabled"] is True
        assert spec["dcgmExporter"]["enablePodLabels"] is True
        assert spec["dcgmExporter"]["podLabelAllowlistRegex"] == [
            r"^project\.runner\.gitlab\.com/(id|name|namespace)$", r"^actions\.github\.com/scale-set-name$"]
        assert cluster_policies(testbed) == [], "a ClusterPolicy beside the GPUCluster"
        # The operator's driver, through the chart's NVIDIADriver CR.
        driver = testbed.get("nvidia.com/v1alpha1", "NVIDIADriver", "default")
        assert driver and driver["spec"]["version"] == DRA_SETUP["gpu_operator_driver_version"]
        assert testbed.list("node.k8s.io/v1", "RuntimeClass", label_selector=OUR_SELECTOR) == [], \
            "no RuntimeClass with dra"
        assert testbed.apps.read_namespaced_deployment("gpu-operator", NAMESPACE).status.available_replicas == 1

        gone = teardown(playbooks, extra).assert_ok()
        torn_down = True
        assert gone.changed > 0
        assert our_leftovers(testbed) == []
        assert gpu_clusters(testbed) == []
        assert testbed.get("nvidia.com/v1alpha1", "NVIDIADriver", "default") is None
    finally:
        if not torn_down:
            teardown(playbooks, extra)


BAD_INPUTS = {
    "mig-none-with-mig-pools": (
        {"gpu_operator_mig_strategy": "none"},
        ["gpu_operator_mig_strategy is none", "a100-mig", "mixed"]),
    "mig-single-with-mig-pools": (
        {"gpu_operator_mig_strategy": "single"},
        ["gpu_operator_mig_strategy is single", "a100-mig"]),
    "time-slicing-unused-class": (
        {"gpu_operator_time_slicing": {"h100": 2}},
        ["gpu_operator_time_slicing sets replicas for h100", "no pool"]),
    "time-slicing-zero-replicas": (
        {"gpu_operator_time_slicing": {"l40s": 0}},
        ["gpu_operator_time_slicing.l40s: must be an integer >= 1"]),
    "unknown-runtime-preset": (
        {"gpu_operator_container_runtime": "k0s"},
        ["gpu_operator_container_runtime", "k0s", "rke2"]),
    "bad-type": (
        {"gpu_operator_driver_enabled": "perhaps"},
        ["gpu_operator_driver_enabled"]),
    "values-override-a-variable": (
        {"gpu_operator_values": {"driver": {"enabled": False}}},
        ["gpu_operator_values.driver.enabled would override gpu_operator_driver_enabled"]),
    "driver-version-without-driver": (
        {"gpu_operator_driver_enabled": False, "gpu_operator_driver_version": "580.105.08"},
        ["gpu_operator_driver_version", "disabled"]),
    "dra-with-time-slicing-and-device-plugin-pools": (
        {"gpu_operator_gpu_allocation": "dra", "gpu_operator_toolkit_enabled": False,
         "gpu_operator_time_slicing": {"l40s": 2}},
        ["gpu_operator_time_slicing is set", "gpu_operator_mig_strategy is mixed",
         "the pools l40s, a10, a100-mig", "ask for their GPUs through the device plugin"]),
}


def check_the_real_operator(testbed, setup) -> None:
    """What the real operator (on the real node) made of our ClusterPolicy."""
    pod = operator_pod(testbed)
    assert pod["spec"]["nodeName"] == REAL_NODE, "the operator should run for real on the real node"
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 0
    operands = wait_for_operands(testbed, {"nvidia-device-plugin-daemonset", "gpu-feature-discovery"})
    host_managed = {"nvidia-driver-daemonset", "nvidia-container-toolkit-daemonset"}
    if setup["gpu_operator_driver_enabled"]:
        assert host_managed <= set(operands)
    else:
        assert not host_managed & set(operands), "preinstalled driver and toolkit: the operator must not deploy them"
    assert CONFIGMAP in str(operands["nvidia-device-plugin-daemonset"]["spec"]["template"]), \
        "the device plugin does not carry our time-slicing ConfigMap"
    gpu_nodes = {"gpu-l40s-0", "gpu-a100-0", "gpu-a10-0"}
    for ds_name, ds in operands.items():
        if "node-feature-discovery" in ds_name:
            continue  # NFD's worker runs everywhere by design
        selector = ds["spec"]["template"]["spec"].get("nodeSelector") or {}
        assert any(k.startswith("nvidia.com/gpu.deploy.") for k in selector), (ds_name, selector)
        assert ds["status"]["desiredNumberScheduled"] <= len(gpu_nodes), ds_name
    plugin_pods = testbed.list("v1", "Pod", namespace=NAMESPACE, label_selector="app=nvidia-device-plugin-daemonset")
    placed = {p["spec"].get("nodeName") for p in plugin_pods}
    assert placed == gpu_nodes


@pytest.mark.helm_agnostic
@pytest.mark.parametrize("case", BAD_INPUTS)
def test_contradictions_fail_before_any_change(testbed, playbooks, case):
    overrides, fragments = BAD_INPUTS[case]
    before = role_objects(testbed)
    playbooks.run(PLAYBOOK, extra_vars={**BASE, **overrides}).assert_failed_with(*fragments)
    assert role_objects(testbed) == before
    assert not helm_releases(testbed)


@pytest.mark.helm_agnostic
def test_operator_toolkit_refused_on_hosts_with_their_own(testbed, playbooks, tmp_path):
    inventory = inventory_with_gpu_hosts(tmp_path / "inventory", {"a10-gpu-0": {"container_toolkit_version": "1.17.8-1"}})
    before = role_objects(testbed)
    run = playbooks.run(PLAYBOOK, inventory=inventory, extra_vars={**BASE, "gpu_operator_toolkit_enabled": True})
    run.assert_failed_with("gpu_operator_toolkit_enabled is true", "a10-gpu-0", "container_toolkit_version")
    assert role_objects(testbed) == before


def test_removed_upstream_values_only_warn(testbed, playbooks):
    values = {"operator": {"defaultRuntime": "containerd"}, "cdi": {"default": True}}
    run = playbooks.run(PLAYBOOK, extra_vars={**BASE, "gpu_operator_values": values},
                        check=True, tags="gpu_operator_preflight").assert_ok()
    # Ansible's own warnings (gpuci.runners.role_plan returns them), not a task's message.
    assert "[WARNING]: gpu_operator_values.operator.defaultRuntime is removed in v25.3" in run.output
    assert "[WARNING]: gpu_operator_values.cdi.default is a no-op since v25.10" in run.output
