# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""roles/arc_runners against the testbed, with the real ARC 0.14.2 charts.

The controller and three scale sets (the Kubeflow-like example's A10 CUDA
one, an L40S one in kubernetes container mode, the /dev/dri Vulkan one) go through check
mode, converge (at -vvv, with recognisable fake credentials) and a second
converge that changes nothing. Runner pods built from the
AutoscalingRunnerSets on the API server are placed by the real scheduler.
Bad input fails before the cluster is touched, and teardown leaves nothing.

ARC's controller runs for real on the testbed's real node (inventories/local
places it there when its image was provided to the testbed; otherwise the
test of the real controller skips, saying so) and reconciles our
AutoscalingRunnerSets. GitHub is out of reach, so it never gets a runner
scale set id: no listener or runner is ever created, it says why in its log,
and on removal the chart's cleanup finalizers are released by the role
(arc_runners_force_finalizers).
"""
from __future__ import annotations

import base64
import time

import pytest
import yaml

from arc_runners_support import (
    ARC_GROUP,
    ARS,
    CONTROLLER_NAMESPACE,
    CONTROLLER_RELEASE,
    K8S_MODE_NAMESPACE,
    NAMESPACES,
    OURS,
    PREFIX,
    RESOURCE_API,
    RUNNERS_NAMESPACE,
    arc_crds,
    claim_templates,
    delete_device_classes,
    delete_namespace,
    delete_pods,
    delete_runtime_class,
    ensure_device_classes,
    ensure_runtime_class,
    gpu_requests,
    helm_releases,
    job_pod,
    nodes_matching,
    place,
    role_objects,
    runner_pod,
    without_tolerations,
)

from lib.layout import REAL_NODE  # tools/testbed, put on sys.path by conftest.py

PLAYBOOK = "arc_runners.yml"
# Fake credentials that must never show up outside their Secrets.
TOKEN = "ghp_gpuciFAKEarcRunnersToken0123456789"
APP_ID = 918273645
INSTALLATION_ID = "5647382910"
PRIVATE_KEY = "-----BEGIN RSA PRIVATE KEY-----\nMIIgpuciFAKEarcRunnersKey\n-----END RSA PRIVATE KEY-----\n"
LEAK_MARKERS = (TOKEN, "MIIgpuciFAKEarcRunnersKey", str(APP_ID), INSTALLATION_ID)

A10 = f"{PREFIX}-a10"
L40S = f"{PREFIX}-l40s"
DRI = f"{PREFIX}-dri"
SCALE_SETS = [
    # The seeds' Kubeflow lane: runs-on {labels: oracle-vm-gpu-a10-1, group: GPUs}.
    {"name": A10, "github_config_url": "https://github.com/example-org", "github_token": TOKEN,
     "runner_group": "GPUs", "labels": ["oracle-vm-gpu-a10-1"], "gpu_class": "a10", "gpus": 1,
     "min_runners": 0, "max_runners": 2},
    # Kubernetes mode: the hook template gives the job pod the GPU.
    {"name": L40S, "namespace": K8S_MODE_NAMESPACE, "github_config_url": "https://github.com/example-org",
     "github_app_id": APP_ID, "github_app_installation_id": INSTALLATION_ID, "github_app_private_key": PRIVATE_KEY,
     "gpu_class": "l40s", "gpus": 1, "container_mode": "kubernetes",
     "work_volume_claim": {"size": "10Gi", "storage_class": "standard"}, "max_runners": 2},
    # The /dev/dri lane; it authenticates with an existing Secret (the A10
    # set's, made earlier in the same run).
    {"name": DRI, "github_config_url": "https://github.com/example-org",
     "github_config_secret": f"{A10}-github-config", "labels": ["vulkan", "webgpu"],
     "gpu_class": "dri", "gpu_access": "dri", "max_runners": 1},
]
BASE = {
    "arc_runners_controller_release_name": CONTROLLER_RELEASE,
    "arc_runners_controller_namespace": CONTROLLER_NAMESPACE,
    "arc_runners_scale_set_namespace": RUNNERS_NAMESPACE,
    "arc_runners_force_finalizers": True,
    "arc_runners_wait_timeout": 120,
}
CONVERGE = {**BASE, "arc_runners_scale_sets": SCALE_SETS}
TEARDOWN = {**CONVERGE, "arc_runners_state": "absent", "arc_runners_remove_crds": True}


def with_scale_set(name: str, **changes) -> dict:
    """CONVERGE with one scale set changed (a key set to None is removed)."""
    scale_sets = []
    for scale_set in SCALE_SETS:
        if scale_set["name"] == name:
            scale_set = {k: v for k, v in {**scale_set, **changes}.items() if v is not None}
        scale_sets.append(scale_set)
    return {**CONVERGE, "arc_runners_scale_sets": scale_sets}


# --- An inventory without scale sets gets nothing of ARC ---------------------

@pytest.mark.parametrize("check", [True, False], ids=["check-mode", "run"])
def test_no_scale_sets_no_controller_and_no_chart_download(testbed, playbooks, check):
    """A GitLab-only site: no controller, CRDs, namespaces or releases; the chart repository is never read."""
    nothing = {**BASE, "arc_runners_scale_sets": [], "arc_runners_chart_repo_url": "oci://127.0.0.1:9/unreachable"}
    before = role_objects(testbed)
    run = playbooks.run(PLAYBOOK, extra_vars=nothing, check=check).assert_ok()
    assert run.changed == 0, run.output[-3000:]
    assert "nothing of ARC to install" in run.output
    assert role_objects(testbed) == before
    assert testbed.get("v1", "Namespace", CONTROLLER_NAMESPACE) is None
    assert not helm_releases(testbed, CONTROLLER_NAMESPACE)


# --- Bad input: refused before any change ---------------------------------

BAD_INPUTS = {
    "two credential kinds": (
        with_scale_set(A10, github_config_secret="some-secret"),
        [f"arc_runners_scale_sets[name={A10}]: set exactly one kind", "got github_token and github_config_secret"]),
    "no credentials": (
        with_scale_set(A10, github_token=None),
        [f"arc_runners_scale_sets[name={A10}]: set exactly one kind", "got none"]),
    "incomplete GitHub App": (
        with_scale_set(L40S, github_app_private_key=None),
        [f"arc_runners_scale_sets[name={L40S}].github_app_private_key: is required"]),
    "min above max": (
        with_scale_set(A10, min_runners=3, max_runners=1),
        [f"arc_runners_scale_sets[name={A10}].min_runners: must not exceed max_runners (1) (got 3)"]),
    "gpu_access the class cannot serve": (
        with_scale_set(A10, gpu_access="dri", gpus=None),
        [f"arc_runners_scale_sets[name={A10}].gpu_access", "GPU class a10 serves only the gpu_access cuda"]),
    "duplicate names": (
        {**CONVERGE, "arc_runners_scale_sets": SCALE_SETS + [SCALE_SETS[0]]},
        [f"arc_runners_scale_sets[name={A10}].name: must be unique: 2 scale sets"]),
    "kubernetes mode without work volume": (
        with_scale_set(L40S, work_volume_claim=None),
        [f"arc_runners_scale_sets[name={L40S}].work_volume_claim: is required with container_mode kubernetes"]),
    "wrong type, named by argument validation": (
        with_scale_set(A10, max_runners="many"),
        ["max_runners", "arc_runners_scale_sets"]),
}


@pytest.mark.helm_agnostic
@pytest.mark.parametrize("case", BAD_INPUTS)
def test_bad_input_fails_before_any_change(testbed, playbooks, case):
    extra_vars, fragments = BAD_INPUTS[case]
    before = role_objects(testbed)
    run = playbooks.run(PLAYBOOK, extra_vars=extra_vars)
    run.assert_failed_with(*fragments)
    assert role_objects(testbed) == before, "bad input changed the cluster"
    for marker in LEAK_MARKERS:
        assert marker not in run.output, f"a credential leaked into the output of a failed run: {marker}"


# --- Converge, idempotence, check mode ------------------------------------

@pytest.fixture(scope="module")
def converged(testbed, playbooks):
    """Check mode, converge at -vvv, converge again; teardown when the module ends."""
    if any(testbed.get("v1", "Namespace", ns) for ns in NAMESPACES):
        # An interrupted earlier run; these names are this module's own.
        playbooks.run(PLAYBOOK, extra_vars=TEARDOWN).assert_ok()
    before = role_objects(testbed)
    runs = {"check": playbooks.run(PLAYBOOK, extra_vars=CONVERGE, check=True)}
    runs["check_unchanged"] = role_objects(testbed) == before
    runs["first"] = playbooks.run(PLAYBOOK, extra_vars=CONVERGE, verbosity=3)
    runs["second"] = playbooks.run(PLAYBOOK, extra_vars=CONVERGE)
    try:
        yield runs
    finally:
        if any(testbed.get("v1", "Namespace", ns) for ns in NAMESPACES):
            playbooks.run(PLAYBOOK, extra_vars=TEARDOWN)


def test_check_mode_changes_nothing(converged):
    check = converged["check"].assert_ok()
    assert check.changed > 0, "check mode should report what it would install"
    assert converged["check_unchanged"], "check mode changed the cluster"


def test_converge_then_nothing_to_change(converged):
    first = converged["first"].assert_ok()
    assert first.changed > 0
    second = converged["second"].assert_ok()
    assert second.changed == 0, f"the second run changed something:\n{second.output[-5000:]}"


@pytest.mark.parametrize("tag", ["arc_runners_scale_sets", "arc_runners_controller"])
def test_a_role_tag_alone_still_plans_and_checks(converged, playbooks, tag):
    """--tags of one part of the role runs the preflight and plan too (the plan used to be undefined)."""
    converged["second"].assert_ok()
    run = playbooks.run(PLAYBOOK, extra_vars=CONVERGE, check=True, tags=tag).assert_ok()
    assert run.changed == 0, run.output[-3000:]


def test_runner_sets_carry_our_pod_templates(testbed, converged):
    converged["first"].assert_ok()
    a10 = testbed.get(*ARS, A10, RUNNERS_NAMESPACE)
    l40s = testbed.get(*ARS, L40S, K8S_MODE_NAMESPACE)
    dri = testbed.get(*ARS, DRI, RUNNERS_NAMESPACE)
    assert a10 and l40s and dri, "an AutoscalingRunnerSet is missing"

    assert a10["spec"]["runnerGroup"] == "GPUs"
    assert a10["spec"]["runnerScaleSetLabels"] == ["oracle-vm-gpu-a10-1"]
    assert (a10["spec"]["minRunners"], a10["spec"]["maxRunners"]) == (0, 2)
    a10_spec = a10["spec"]["template"]["spec"]
    assert a10_spec["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-A10"}
    assert a10_spec["runtimeClassName"] == "nvidia"
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in a10_spec["tolerations"]

    l40s_spec = l40s["spec"]["template"]["spec"]
    runner = next(c for c in l40s_spec["containers"] if c["name"] == "runner")
    env = {e["name"]: e.get("value") for e in runner["env"]}
    assert env["ACTIONS_RUNNER_CONTAINER_HOOK_TEMPLATE"] == "/home/runner/pod-templates/job-template.yaml"
    assert env["ACTIONS_RUNNER_CONTAINER_HOOKS"] == "/home/runner/k8s/index.js"  # the chart's kubernetes mode
    volumes = {v["name"]: v for v in l40s_spec["volumes"]}
    assert volumes["hook-template"]["configMap"]["name"] == f"{L40S}-hook-template"
    claim = volumes["work"]["ephemeral"]["volumeClaimTemplate"]["spec"]
    assert claim == {"accessModes": ["ReadWriteOnce"], "storageClassName": "standard",
                     "resources": {"requests": {"storage": "10Gi"}}}

    dri_spec = dri["spec"]["template"]["spec"]
    assert dri_spec["nodeSelector"] == {"gpuci.runners/dri": "true"}
    assert {"name": "dev-dri", "hostPath": {"path": "/dev/dri", "type": "Directory"}} in dri_spec["volumes"]
    assert "runtimeClassName" not in dri_spec

    # Our objects are labelled ours; the hook template is what the filter makes.
    hook = testbed.get("v1", "ConfigMap", f"{L40S}-hook-template", K8S_MODE_NAMESPACE)
    assert hook["metadata"]["labels"]["app.kubernetes.io/part-of"] == "gpuci-runners"
    job_spec = yaml.safe_load(hook["data"]["job-template.yaml"])["spec"]
    assert job_spec["runtimeClassName"] == "nvidia"
    assert job_spec["containers"][0]["name"] == "$job"
    for namespace in NAMESPACES:
        assert testbed.get("v1", "Namespace", namespace)["metadata"]["labels"]["app.kubernetes.io/part-of"] \
            == "gpuci-runners"


def test_credentials_live_only_in_secrets(testbed, converged):
    first = converged["first"].assert_ok()
    for marker in LEAK_MARKERS:
        assert marker not in first.output, f"a credential appeared in the -vvv output: {marker!r}"

    token_secret = testbed.get("v1", "Secret", f"{A10}-github-config", RUNNERS_NAMESPACE)
    assert decode(token_secret["data"]) == {"github_token": TOKEN}
    app_secret = testbed.get("v1", "Secret", f"{L40S}-github-config", K8S_MODE_NAMESPACE)
    assert decode(app_secret["data"]) == {"github_app_id": str(APP_ID), "github_app_installation_id": INSTALLATION_ID,
                                          "github_app_private_key": PRIVATE_KEY}
    assert testbed.get("v1", "Secret", f"{DRI}-github-config", RUNNERS_NAMESPACE) is None, \
        "a scale set with github_config_secret got a Secret of its own"

    for namespace in (RUNNERS_NAMESPACE, K8S_MODE_NAMESPACE):
        for release in helm_releases(testbed, namespace).values():
            assert isinstance(release["config"]["githubConfigSecret"], str)
            text = repr(release)
            for marker in LEAK_MARKERS:
                assert marker not in text, f"a credential is stored in Helm release {release['name']}"
        for configmap in testbed.list("v1", "ConfigMap", namespace=namespace):
            for marker in LEAK_MARKERS:
                assert marker not in repr(configmap.get("data")), f"a credential is in ConfigMap {configmap['metadata']['name']}"
        # Only our labelled Secrets hold credentials (the chart made none).
        for secret in testbed.list("v1", "Secret", namespace=namespace):
            if any(marker in repr(decode(secret.get("data") or {})) for marker in LEAK_MARKERS):
                assert secret["metadata"]["name"].endswith("-github-config")
                assert secret["metadata"]["labels"]["app.kubernetes.io/part-of"] == "gpuci-runners"


def decode(data: dict) -> dict:
    decoded = {}
    for key, value in data.items():
        raw = base64.b64decode(value)
        try:
            decoded[key] = raw.decode()
        except UnicodeDecodeError:  # Helm's gzip; searched separately
            decoded[key] = repr(raw)
    return decoded


# --- Scheduling proof ------------------------------------------------------

@pytest.fixture(scope="module")
def runtime_class(testbed):
    """RuntimeClass admission rejects pods naming a missing RuntimeClass."""
    created = ensure_runtime_class(testbed)
    yield
    if created:
        delete_runtime_class(testbed)


@pytest.fixture
def pods(testbed):
    made: list[dict] = []
    yield made
    delete_pods(testbed, made)


def placed(testbed, pods: list, pod: dict) -> dict:
    pods.append(pod)
    return place(testbed, pod)


def unschedulable(pod: dict) -> bool:
    return not pod["spec"].get("nodeName") and any(
        c["type"] == "PodScheduled" and c["reason"] == "Unschedulable" for c in pod["status"]["conditions"])


LANES = {
    # scale set, namespace, the only node it may land on, does it request a GPU
    "a10-cuda": (A10, RUNNERS_NAMESPACE, "gpu-a10-0", True),
    "l40s-kubernetes-mode": (L40S, K8S_MODE_NAMESPACE, "gpu-l40s-0", False),
    "dri": (DRI, RUNNERS_NAMESPACE, "dri-0", False),
}


@pytest.mark.parametrize("lane", LANES)
def test_runner_pod_lands_on_its_node_only(testbed, converged, runtime_class, pods, lane):
    converged["first"].assert_ok()
    name, namespace, node, requests_gpu = LANES[lane]
    runner = runner_pod(testbed.get(*ARS, name, namespace), f"{name}-runner")
    assert nodes_matching(testbed, runner["spec"]["nodeSelector"]) == [node], "the node selector is not exclusive"

    landed = placed(testbed, pods, runner)
    assert landed["spec"].get("nodeName") == node, testbed.pod_events(runner["metadata"]["name"], namespace)
    if requests_gpu:
        assert gpu_requests(landed) == {"runner": {"nvidia.com/gpu": "1"}}
        assert landed["spec"]["runtimeClassName"] == "nvidia"
    else:
        assert gpu_requests(landed) == {}, "this runner pod must not hold a GPU"
    if lane == "dri":
        mounts = next(c for c in landed["spec"]["containers"] if c["name"] == "runner")["volumeMounts"]
        assert {"name": "dev-dri", "mountPath": "/dev/dri"} in [{k: m[k] for k in ("name", "mountPath")} for m in mounts]

    # Its node is tainted: without the tolerations nothing can take it.
    refused = placed(testbed, pods, without_tolerations(runner))
    assert unschedulable(refused), f"{refused['metadata']['name']} was placed on {refused['spec'].get('nodeName')}"
    if requests_gpu:
        # No untainted node has a GPU, whatever the node selector says.
        anywhere = placed(testbed, pods, without_tolerations(runner, drop_node_selector=True))
        assert unschedulable(anywhere), f"a GPU pod without tolerations landed on {anywhere['spec'].get('nodeName')}"


def test_kubernetes_mode_job_pod_gets_the_gpu(testbed, converged, runtime_class, pods):
    converged["first"].assert_ok()
    hook = testbed.get("v1", "ConfigMap", f"{L40S}-hook-template", K8S_MODE_NAMESPACE)
    job = job_pod(hook["data"]["job-template.yaml"], f"{L40S}-job", K8S_MODE_NAMESPACE)
    landed = placed(testbed, pods, job)
    assert landed["spec"].get("nodeName") == "gpu-l40s-0", testbed.pod_events(job["metadata"]["name"], K8S_MODE_NAMESPACE)
    assert gpu_requests(landed) == {"job": {"nvidia.com/gpu": "1"}}
    assert landed["spec"]["runtimeClassName"] == "nvidia"
    refused = placed(testbed, pods, without_tolerations(job, drop_node_selector=True))
    assert unschedulable(refused)


# --- The real controller ----------------------------------------------------

ARS_FINALIZER = "autoscalingrunnerset.actions.github.com/finalizer"


def _controller_pod(testbed) -> dict:
    pods = testbed.list("v1", "Pod", namespace=CONTROLLER_NAMESPACE,
                        label_selector="app.kubernetes.io/part-of=gha-rs-controller")
    assert len(pods) == 1, [p["metadata"]["name"] for p in pods]
    return pods[0]


def test_the_real_controller_reconciles_our_scale_sets(testbed, converged, real_components):
    real_components.require("arc-controller")
    converged["second"].assert_ok()
    pod = _controller_pod(testbed)
    assert pod["spec"]["nodeName"] == REAL_NODE
    assert pod["status"]["phase"] == "Running"
    assert pod["status"]["containerStatuses"][0]["restartCount"] == 0
    # The controller marks every scale set it took on with its finalizer, then
    # asks GitHub for a runner scale set: that fails here, and its log says so.
    wanted = {(A10, RUNNERS_NAMESPACE), (L40S, K8S_MODE_NAMESPACE), (DRI, RUNNERS_NAMESPACE)}
    deadline = time.monotonic() + 180
    while True:
        marked = {(n, ns) for n, ns in wanted if ARS_FINALIZER in
                  ((testbed.get(*ARS, n, ns) or {}).get("metadata", {}).get("finalizers") or [])}
        log = testbed.core.read_namespaced_pod_log(pod["metadata"]["name"], CONTROLLER_NAMESPACE)
        if marked == wanted and "example-org" in log and "ERROR" in log or time.monotonic() > deadline:
            break
        time.sleep(3)
    assert marked == wanted, f"the controller did not take on {sorted(wanted - marked)}"
    assert any("ERROR" in line and "example-org" in line for line in log.splitlines()), log[-3000:]
    # Without GitHub no scale set id, so no listener: asserted, not hidden.
    assert testbed.list(f"{ARC_GROUP}/v1alpha1", "AutoscalingListener", namespace=CONTROLLER_NAMESPACE) == []
    for marker in LEAK_MARKERS:
        assert marker not in log, "a credential reached the controller's log"


# --- Removal ----------------------------------------------------------------

def test_modify_and_remove_scale_sets(testbed, playbooks, converged):
    """One run: the L40S set is removed, the dri set gets a token of its own,
    and the A10 set switches to the dri set's Secret, so its own is pruned."""
    converged["second"].assert_ok()
    scale_sets = with_scale_set(L40S, state="absent")["arc_runners_scale_sets"]
    changes = {A10: {"github_token": None, "github_config_secret": f"{DRI}-github-config"},
               DRI: {"github_config_secret": None, "github_token": TOKEN}}
    scale_sets = [{k: v for k, v in {**s, **changes.get(s["name"], {})}.items() if v is not None} for s in scale_sets]
    run = playbooks.run(PLAYBOOK, extra_vars={**CONVERGE, "arc_runners_scale_sets": scale_sets}).assert_ok()
    assert run.changed > 0

    assert testbed.get(*ARS, L40S, K8S_MODE_NAMESPACE) is None
    assert L40S not in helm_releases(testbed, K8S_MODE_NAMESPACE)
    assert not testbed.list("v1", "Secret", namespace=K8S_MODE_NAMESPACE, label_selector=OURS)
    assert not testbed.list("v1", "ConfigMap", namespace=K8S_MODE_NAMESPACE, label_selector=OURS)
    # The chart's RBAC objects are gone too (their finalizers released).
    for kind in ("Role", "RoleBinding"):
        assert not testbed.list("rbac.authorization.k8s.io/v1", kind, namespace=K8S_MODE_NAMESPACE,
                                label_selector=f"actions.github.com/scale-set-name={L40S}")

    assert testbed.get(*ARS, A10, RUNNERS_NAMESPACE)["spec"]["githubConfigSecret"] == f"{DRI}-github-config"
    assert testbed.get(*ARS, DRI, RUNNERS_NAMESPACE)["spec"]["githubConfigSecret"] == f"{DRI}-github-config"
    assert testbed.get("v1", "Secret", f"{A10}-github-config", RUNNERS_NAMESPACE) is None, "the unused Secret was kept"
    assert decode(testbed.get("v1", "Secret", f"{DRI}-github-config", RUNNERS_NAMESPACE)["data"]) == {"github_token": TOKEN}


def test_teardown_leaves_nothing(testbed, playbooks, converged):
    converged["second"].assert_ok()
    run = playbooks.run(PLAYBOOK, extra_vars=TEARDOWN).assert_ok()
    assert role_objects(testbed) == {}, f"left behind: {sorted(role_objects(testbed))}"
    # The CRDs go, unless another installation's runner sets still use them.
    # The yaml callback folds long messages and doubles the apostrophe of
    # "ARC's" in a quoted scalar: compare past it, with the line breaks undone.
    kept = "CRDs are kept because these AutoscalingRunnerSets still use them"
    assert not arc_crds(testbed) or kept in " ".join(run.output.split())
    again = playbooks.run(PLAYBOOK, extra_vars=TEARDOWN).assert_ok()
    assert again.changed == 0, again.output[-4000:]


# --- DRA: scale sets with gpu_allocation dra --------------------------------

DRA_RUNNER = f"{PREFIX}-dra"
DRA_K8S = f"{PREFIX}-dra-k8s"
DRA_SCALE_SETS = [
    # Container mode none: the runner container claims the GPU.
    {"name": DRA_RUNNER, "github_config_url": "https://github.com/example-org", "github_token": TOKEN,
     "gpu_class": "h200", "gpus": 1, "gpu_allocation": "dra", "max_runners": 1},
    # Kubernetes mode: the job pod claims it (its hook template), the runner pod claims nothing.
    {"name": DRA_K8S, "namespace": K8S_MODE_NAMESPACE, "github_config_url": "https://github.com/example-org",
     "github_token": TOKEN, "gpu_class": "h200", "gpus": 2, "gpu_allocation": "dra", "container_mode": "kubernetes",
     "work_volume_claim": {"size": "10Gi", "storage_class": "standard"}, "max_runners": 1},
]
DRA_CONVERGE = {**BASE, "arc_runners_scale_sets": DRA_SCALE_SETS}
DRA_TEARDOWN = {**DRA_CONVERGE, "arc_runners_state": "absent", "arc_runners_remove_crds": True}


def pod_claims(scale_set: str) -> list[dict]:
    """A pod's resourceClaims naming the scale set's template (gpu/dra.py)."""
    return [{"name": "gpu", "resourceClaimTemplateName": f"{scale_set}-gpu"}]


def test_dra_scale_sets_converge_rerun_and_leave_no_claim_template(testbed, playbooks):
    """A DRA scale set in container mode none and one in kubernetes mode: one converge, one rerun, one teardown.

    Real here: the API server (Kubernetes 1.34, resource.k8s.io/v1) takes our
    ResourceClaimTemplates and compiles their CEL selectors, and ARC 0.14.2's
    AutoscalingRunnerSet CRD keeps the runner pod's resourceClaims and the
    runner container's resources.claims (a structural schema would prune
    fields it does not know). Not tested: ARC's controller making runner
    pods that carry the claims. Its image is not provided to the testbed, so
    it never runs here; actions/actions-runner-controller#4379 reports a
    scale set whose runner pods never appeared once its template had claims,
    which only the real controller can show or rule out.

    The DeviceClasses are the testbed's where it makes them; where it does
    not yet, this test makes them with kubectl (as NVIDIA's DRA driver chart
    does) and removes them afterwards. The kubernetes-mode namespace exists
    before the converge, so teardown keeps it: its template must be deleted
    by the role, not with a namespace the role made. Placed after the
    module's teardown: it brings up and removes the controller of its own run.
    """
    if any(testbed.get("v1", "Namespace", ns) for ns in NAMESPACES):
        # An interrupted earlier run, or the module's converge left standing (-k).
        playbooks.run(PLAYBOOK, extra_vars=TEARDOWN).assert_ok()
    testbed.core.create_namespace({"metadata": {"name": K8S_MODE_NAMESPACE}})
    made = ensure_device_classes(testbed)
    try:
        first = playbooks.run(PLAYBOOK, extra_vars=DRA_CONVERGE).assert_ok()
        assert first.changed > 0

        templates = {(t["metadata"]["namespace"], t["metadata"]["name"]): t for t in claim_templates(testbed)}
        assert sorted(templates) == sorted([(K8S_MODE_NAMESPACE, f"{DRA_K8S}-gpu"),
                                            (RUNNERS_NAMESPACE, f"{DRA_RUNNER}-gpu")])
        (request,) = templates[(K8S_MODE_NAMESPACE, f"{DRA_K8S}-gpu")]["spec"]["spec"]["devices"]["requests"]
        assert request["exactly"]["deviceClassName"] == "gpu.nvidia.com" and request["exactly"]["count"] == 2
        assert request["exactly"]["selectors"][0]["cel"]["expression"].endswith('== "NVIDIA-H200"')
        assert templates[(RUNNERS_NAMESPACE, f"{DRA_RUNNER}-gpu")]["metadata"]["labels"][
            "gpuci.runners/arc-scale-set"] == DRA_RUNNER

        # What the API server kept of the runner sets (ARC 0.14.2's CRD schema).
        runner_spec = testbed.get(*ARS, DRA_RUNNER, RUNNERS_NAMESPACE)["spec"]["template"]["spec"]
        assert runner_spec["resourceClaims"] == pod_claims(DRA_RUNNER)
        runner = next(c for c in runner_spec["containers"] if c["name"] == "runner")
        assert runner["resources"]["claims"] == [{"name": "gpu"}]
        assert gpu_requests({"spec": runner_spec}) == {}, "a DRA runner must not ask the device plugin too"
        k8s_spec = testbed.get(*ARS, DRA_K8S, K8S_MODE_NAMESPACE)["spec"]["template"]["spec"]
        assert "resourceClaims" not in k8s_spec
        assert all("claims" not in (c.get("resources") or {}) for c in k8s_spec["containers"])
        hook = testbed.core.read_namespaced_config_map(f"{DRA_K8S}-hook-template", K8S_MODE_NAMESPACE)
        job_spec = yaml.safe_load(hook.data["job-template.yaml"])["spec"]
        assert job_spec["resourceClaims"] == pod_claims(DRA_K8S)
        # The job pod the hook would make is one the API server takes, claim included (dry run: not placed).
        pod = job_pod(hook.data["job-template.yaml"], f"{DRA_K8S}-job", K8S_MODE_NAMESPACE)
        testbed.core.create_namespaced_pod(K8S_MODE_NAMESPACE, pod, dry_run="All")

        second = playbooks.run(PLAYBOOK, extra_vars=DRA_CONVERGE).assert_ok()
        assert second.changed == 0, f"the second run changed something:\n{second.output[-5000:]}"
    finally:
        teardown = playbooks.run(PLAYBOOK, extra_vars=DRA_TEARDOWN)
        delete_device_classes(testbed, made)
        left = claim_templates(testbed) + testbed.list(RESOURCE_API, "ResourceClaimTemplate", K8S_MODE_NAMESPACE)
        # The kept namespace holds what Kubernetes makes in every namespace (its default ServiceAccount, ...).
        kept = sorted(key for key in role_objects(testbed) if K8S_MODE_NAMESPACE not in key[1:])
        delete_namespace(testbed, K8S_MODE_NAMESPACE)
    teardown.assert_ok()
    assert left == [], "teardown left a ResourceClaimTemplate"
    assert kept == [], f"left behind: {kept}"
