# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Role gitlab_runner against the testbed, with the real gitlab-runner 0.86.0 chart.

The tests run in file order and share one fleet of pools: bad input, check
mode, converge, idempotence, what the chart stored, the scheduling proof, token
hygiene, pruning, teardown.

Real (GitLab Runner 19.4.0, which the testbed builds from its Go module;
without its images those tests skip, naming them): the runner managers run on the testbed's real
node with the config.toml the role rendered and register with the testbed's
GitLab stand-in (tools/testbed/gitlab_standin.py; GitLab itself is out of
reach); the `cpu-real` pool takes jobs from the stand-in and runs them through
GitLab's own Kubernetes executor on the real node, and the tests compare the
job pod the runner made with the one our docs (and job_pod) describe.
Simulated by kwok: the GPU nodes, so the job pods of the GPU scheduling proof
are made by the test, not by the runner.
"""
from __future__ import annotations

import json
import time
import uuid

import pytest
import yaml
from kubernetes.client.rest import ApiException

from helpers import REPO_ROOT
from gitlab_standin import token_fingerprint  # tools/testbed, put on sys.path by conftest.py
from lib.images import BASE_IMAGE, GITLAB_RUNNER_HELPER_IMAGE
from lib.layout import REAL_NODE, Layout
from lib.node import REAL_NODE_LABEL, REAL_NODE_TAINT

from gitlab_runner_support import (
    ADVANCED_POD_SPEC_FLAG,
    configmap_texts,
    fleet_of_its_own,
    helm_release_payloads,
    job_pod,
    render_runner,
    runner_table,
    scheduled_or_refused,
    scoped_snapshot,
    secret_texts,
    StandInJobs,
    trace_text,
)

PLAYBOOK = "gitlab_runner.yml"
FLEET = "gitlab-runner-tests"
MANAGER_NS = "gitlab-runner-test"
GPU_JOBS_NS = "gitlab-runner-test-gpu-jobs"
CPU_JOBS_NS = "gitlab-runner-test-cpu-jobs"
OUR_NAMESPACES = {MANAGER_NS, GPU_JOBS_NS, CPU_JOBS_NS}
FLEET_SELECTOR = f"app.kubernetes.io/part-of=gpuci-runners,gpuci.runners/fleet={FLEET}"
# Recognisable, unique per session, so a leak cannot be a coincidence.
RUN_ID = uuid.uuid4().hex[:12]
TOKENS = {pool: f"glrt-gpuci-canary-{pool}-{RUN_ID}" for pool in ("l40s", "a100-mig", "cpu", "cpu-real")}
ROTATED_L40S_TOKEN = f"glrt-gpuci-rotated-l40s-{RUN_ID}"
GPU_NODES = {"gpu-l40s-0", "gpu-a100-0", "gpu-a10-0"}
DRI_NODES = {"dri-0"}


def pools(tokens: dict[str, str] = TOKENS) -> list[dict]:
    return [
        {"name": "l40s", "gpu_class": "l40s", "gpus": 1, "namespace": GPU_JOBS_NS, "concurrent": 2,
         "token": tokens["l40s"], "hpa": {"min_replicas": 1, "max_replicas": 2}},
        {"name": "a100-mig", "gpu_class": "a100", "mig_profile": "1g.10gb", "namespace": GPU_JOBS_NS,
         "token": tokens["a100-mig"]},
        {"name": "cpu", "namespace": CPU_JOBS_NS, "cpu_request": "500m", "memory_request": "1Gi",
         "token": tokens["cpu"]},
        # Its jobs run on the real node, privileged as a dri or docker-in-docker pool would be.
        # Its tags route the end-to-end jobs to it alone (the stand-in routes by tags, as GitLab does).
        {"name": "cpu-real", "namespace": CPU_JOBS_NS, "cpu_request": "100m", "memory_request": "64Mi",
         "tags": ["cpu", "real-node"], "image": BASE_IMAGE, "helper_image": GITLAB_RUNNER_HELPER_IMAGE, "privileged": True,
         "node_selector": {REAL_NODE_LABEL: "true"},
         "tolerations": [dict(REAL_NODE_TAINT, operator="Equal")], "token": tokens["cpu-real"]},
    ]


def fleet_vars(pool_list: list[dict], **extra) -> dict:
    return {"gitlab_runner_fleet": FLEET, "gitlab_runner_namespace": MANAGER_NS,
            "gitlab_runner_pools": pool_list, **extra}


def release(pool: str) -> str:
    return f"gitlab-runner-{pool}"


def leftovers(cluster) -> list[str]:
    """Namespaces and ServiceAccounts of our fleet still on the cluster."""
    return fleet_objects(cluster, "Namespace") + fleet_objects(cluster, "ServiceAccount")


@pytest.fixture(scope="module")
def fleet(testbed, playbooks):
    """Start from nothing of ours (a run may have been interrupted); remove whatever the tests left."""
    with fleet_of_its_own(testbed, playbooks, PLAYBOOK, fleet_vars([], gitlab_runner_state="absent"), leftovers):
        yield testbed


def stored_runner(cluster, pool: str) -> dict:
    """The [[runners]] table of the config.toml the chart put in the pool's ConfigMap."""
    configmap = cluster.core.read_namespaced_config_map(release(pool), MANAGER_NS)
    return runner_table(configmap.data["config.template.toml"])


def fleet_objects(cluster, kind: str, api_version: str = "v1") -> list[str]:
    return sorted(f"{o['metadata'].get('namespace', '')}/{o['metadata']['name']}"
                  for o in cluster.list(api_version, kind, label_selector=FLEET_SELECTOR))


# --- bad input never touches the cluster -------------------------------------------------------

# One case per rule source (a pool rule, a GPU key of the config builder), both
# reported by the preflight filter; the full catalogue of bad inventories is
# tests/integration/test_bad_inputs.py.
@pytest.mark.parametrize("bad_pool, fragments", [
    ({"name": "reg", "token": "GR1348941notanauthtoken"},
     ["gitlab_runner_pools[name=reg].token: must be a runner authentication token", "token not shown"]),
    ({"name": "l40s-mig", "token": "glrt-x", "gpu_class": "l40s", "mig_profile": "1g.10gb"},
     ["gitlab_runner_pools[name=l40s-mig].mig_profile", "GPU class l40s has no such MIG profile"]),
], ids=["registration-token", "mig-on-l40s"])
@pytest.mark.helm_agnostic
def test_bad_input_fails_before_any_change(fleet, playbooks, bad_pool, fragments):
    before = scoped_snapshot(fleet, OUR_NAMESPACES, set())
    good = {"name": "ok", "token": "glrt-fine", "namespace": CPU_JOBS_NS}
    run = playbooks.run(PLAYBOOK, extra_vars=fleet_vars([good, bad_pool]))
    run.assert_failed_with(*fragments)
    assert "GR1348941notanauthtoken" not in run.output
    assert scoped_snapshot(fleet, OUR_NAMESPACES, set()) == before


@pytest.mark.helm_agnostic
@pytest.mark.parametrize("example", ["gitlab-l40s-a100", "ska-like"])
def test_example_inventory_passes_preflight(playbooks, example):
    """The documented examples are valid input: every pool renders (no cluster is touched)."""
    inventory = REPO_ROOT / "inventories" / "examples" / example
    names = [p["name"] for p in yaml.safe_load((inventory / "group_vars/all/gitlab_runner.yml").read_text())
             ["gitlab_runner_pools"]]
    tokens = {"vault_gitlab_runner_tokens": {name: f"glrt-example-{name}" for name in names}}
    playbooks.run(PLAYBOOK, inventory=inventory, extra_vars=tokens, tags="gitlab_runner_preflight").assert_ok()


# --- converge ------------------------------------------------------------------------------

def test_check_mode_changes_nothing(fleet, playbooks):
    before = scoped_snapshot(fleet, OUR_NAMESPACES, set())
    run = playbooks.run(PLAYBOOK, extra_vars=fleet_vars(pools()), check=True).assert_ok()
    assert run.changed > 0, "check mode should report what it would change"
    assert scoped_snapshot(fleet, OUR_NAMESPACES, set()) == before
    assert not fleet_objects(fleet, "Namespace")


@pytest.fixture(scope="module")
def converged(fleet, playbooks):
    """The fleet of pools() converged (at -vvv, for the token test): what every later test starts from, so each
    of them also passes alone on a new testbed."""
    return playbooks.run(PLAYBOOK, extra_vars=fleet_vars(pools()), verbosity=3).assert_ok()


def test_converge_at_vvv_never_shows_a_token(converged):
    run = converged
    assert run.changed > 0
    leaked = [pool for pool, token in TOKENS.items() if token in run.output]
    assert not leaked, f"tokens of {leaked} appear in the ansible output"


@pytest.mark.usefixtures("converged")
def test_rerun_changes_nothing(fleet, playbooks):
    run = playbooks.run(PLAYBOOK, extra_vars=fleet_vars(pools())).assert_ok()
    assert run.changed == 0, run.output[-4000:]


# --- what the chart stored ---------------------------------------------------------------------

@pytest.mark.usefixtures("converged")
def test_configmaps_hold_our_config_toml(fleet):
    for pool in TOKENS:
        runner = stored_runner(fleet, pool)
        kube = runner["kubernetes"]
        assert runner["executor"] == "kubernetes"
        assert runner["feature_flags"][ADVANCED_POD_SPEC_FLAG] is True
        assert isinstance(kube["pod_spec"], list) and kube["pod_spec"], "pod_spec must be an array of tables"
        assert all(isinstance(entry, dict) and entry["patch_type"] == "strategic" for entry in kube["pod_spec"])
        assert "token" not in runner and "url" not in runner, "the chart adds url and token at registration"
        # Without runners.name the chart registers the runner under the manager pod's hostname.
        register = fleet.core.read_namespaced_config_map(release(pool), MANAGER_NS).data["register-the-runner"]
        assert f'--name="{pool}"' in register
    l40s = stored_runner(fleet, "l40s")["kubernetes"]
    assert l40s["namespace"] == GPU_JOBS_NS
    assert l40s["node_selector"] == {"nvidia.com/gpu.product": "NVIDIA-L40S"}
    assert isinstance(l40s["node_tolerations"], dict)
    assert l40s["runtime_class_name"] == "nvidia"
    # Privilege, when a pool asks, is the build container's alone; the executor-wide key is never written.
    assert "privileged" not in l40s and "build_container_security_context" not in l40s
    assert "node_selector" not in stored_runner(fleet, "cpu")["kubernetes"]


@pytest.mark.usefixtures("converged")
def test_each_pool_has_its_own_least_privilege_objects(fleet):
    for pool in TOKENS:
        name = release(pool)
        account = fleet.core.read_namespaced_service_account(name, MANAGER_NS)
        assert account.metadata.labels["gpuci.runners/pool"] == pool
        deployment = fleet.apps.read_namespaced_deployment(name, MANAGER_NS)
        assert deployment.spec.template.spec.service_account_name == name
        assert deployment.spec.template.metadata.labels["app.kubernetes.io/part-of"] == "gpuci-runners"
        jobs_ns = CPU_JOBS_NS if pool.startswith("cpu") else GPU_JOBS_NS
        role = fleet.get("rbac.authorization.k8s.io/v1", "Role", name, jobs_ns)
        assert role is not None, f"no Role {jobs_ns}/{name}"
        for rule in role["rules"]:
            assert "*" not in rule["verbs"] and "*" not in rule["resources"], rule
            assert "namespaces" not in rule["resources"]
        binding = fleet.get("rbac.authorization.k8s.io/v1", "RoleBinding", name, jobs_ns)
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": name, "namespace": MANAGER_NS}]
    # The chart makes no RBAC of its own, and nothing cluster-wide.
    assert not [b for b in fleet.list("rbac.authorization.k8s.io/v1", "ClusterRoleBinding")
                if any(s.get("namespace") == MANAGER_NS for s in b.get("subjects") or [])]
    hpa = fleet.get("autoscaling/v2", "HorizontalPodAutoscaler", release("l40s"), MANAGER_NS)
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (1, 2)


# --- the scheduling proof ---------------------------------------------------------------------

def _run_job_pod(cluster, pod: dict) -> dict:
    cluster.apply_pod(pod)
    return cluster.wait_pod(pod["metadata"]["name"], pod["metadata"]["namespace"],
                            lambda p: scheduled_or_refused(p) and (not p["spec"].get("nodeName")
                                                                   or p["status"].get("phase") == "Running"))


@pytest.mark.usefixtures("converged")
@pytest.mark.helm_agnostic
def test_l40s_job_pod_runs_on_the_l40s_node(fleet, nvidia_runtime_class):
    pod = job_pod(stored_runner(fleet, "l40s"), GPU_JOBS_NS)
    build = pod["spec"]["containers"][0]
    assert build["name"] == "build" and build["resources"]["limits"]["nvidia.com/gpu"] == "1"
    assert [c["name"] for c in pod["spec"]["containers"]] == ["build", "helper"]
    placed = _run_job_pod(fleet, pod)
    assert placed["spec"].get("nodeName") == "gpu-l40s-0", placed.get("status")
    assert placed["status"]["phase"] == "Running"


@pytest.mark.usefixtures("converged")
@pytest.mark.helm_agnostic
def test_a100_mig_job_pod_runs_on_the_a100_node(fleet, nvidia_runtime_class):
    pod = job_pod(stored_runner(fleet, "a100-mig"), GPU_JOBS_NS)
    assert pod["spec"]["containers"][0]["resources"]["limits"] == {"nvidia.com/mig-1g.10gb": "1"}
    placed = _run_job_pod(fleet, pod)
    assert placed["spec"].get("nodeName") == "gpu-a100-0", placed.get("status")
    assert placed["status"]["phase"] == "Running"


@pytest.mark.usefixtures("converged")
@pytest.mark.helm_agnostic
def test_cpu_job_pods_never_land_on_gpu_or_dri_nodes(fleet):
    # Tolerate every taint, so only the pool's own affinity can keep the pods
    # off the GPU and /dev/dri nodes; several pods give the scheduler the chance.
    tolerate_all = [{"operator": "Exists"}]
    runner = stored_runner(fleet, "cpu")
    nodes = []
    for _attempt in range(6):
        placed = _run_job_pod(fleet, job_pod(runner, CPU_JOBS_NS, extra_tolerations=tolerate_all))
        nodes.append(placed["spec"].get("nodeName"))
    assert all(nodes), f"a CPU job pod was not scheduled: {nodes}"
    assert not set(nodes) & (GPU_NODES | DRI_NODES), nodes


@pytest.mark.usefixtures("converged")
@pytest.mark.helm_agnostic
def test_cpu_job_pod_without_the_affinity_would_reach_gpu_nodes(fleet):
    """Control for the test above: the same tolerant pods without the pool's patch do spread to GPU nodes."""
    runner = stored_runner(fleet, "cpu")
    runner["feature_flags"][ADVANCED_POD_SPEC_FLAG] = False  # GitLab then ignores pod_spec
    nodes = set()
    for _attempt in range(12):
        placed = _run_job_pod(fleet, job_pod(runner, CPU_JOBS_NS, extra_tolerations=[{"operator": "Exists"}]))
        nodes.add(placed["spec"].get("nodeName"))
    assert nodes & (GPU_NODES | DRI_NODES), f"control pods stayed on {nodes}; the CPU test proves nothing"


@pytest.mark.usefixtures("converged")
@pytest.mark.helm_agnostic
def test_job_asking_more_gpus_than_any_node_stays_pending(fleet, nvidia_runtime_class):
    # Rendered by the same filter, without a release of its own (no node has 8 GPUs).
    runner = render_runner({"name": "l40s-x8", "gpu_class": "l40s", "gpus": 8, "namespace": GPU_JOBS_NS})
    pod = job_pod(runner, GPU_JOBS_NS)
    assert pod["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "8"
    placed = _run_job_pod(fleet, pod)
    assert not placed["spec"].get("nodeName")
    assert placed["status"]["phase"] == "Pending"
    assert any(c["type"] == "PodScheduled" and c["reason"] == "Unschedulable" for c in placed["status"]["conditions"])
    events = fleet.pod_events(pod["metadata"]["name"], GPU_JOBS_NS)
    assert any(e["reason"] == "FailedScheduling" and "nvidia.com/gpu" in (e["message"] or "") for e in events), events


# --- token hygiene ------------------------------------------------------------------------------

@pytest.mark.usefixtures("converged")
def test_tokens_live_only_in_our_secrets(fleet):
    secrets = secret_texts(fleet)
    for pool, token in TOKENS.items():
        holders = sorted(key for key, text in secrets.items() if token in text)
        assert holders == [(MANAGER_NS, f"{release(pool)}-token")], f"{pool}: token found in {holders}"
    for key, text in configmap_texts(fleet).items():
        assert not [pool for pool, token in TOKENS.items() if token in text], f"a token is in ConfigMap {key}"
    payloads = helm_release_payloads(fleet, MANAGER_NS)
    assert len(payloads) >= len(TOKENS)
    for name, payload in payloads.items():
        assert not [pool for pool, token in TOKENS.items() if token in payload], f"a token is in Helm release {name}"
        assert '"secret":"gitlab-runner-' in payload.replace(" ", ""), "runners.secret should name our Secret"


STANDIN_RECORD = Layout.from_environment().node_dir / "gitlab-standin.jsonl"


def standin_calls(token: str, since: float = 0.0) -> list[tuple[str, int]]:
    """(endpoint, status) of the stand-in's requests made with `token` after `since`."""
    wanted = token_fingerprint(token)
    lines = [json.loads(line) for line in STANDIN_RECORD.read_text().splitlines()] if STANDIN_RECORD.exists() else []
    return [(r["endpoint"], r["status"]) for r in lines if r["token_sha256"] == wanted and r["time"] > since]


# A ready manager asks for jobs every check_interval (3 s); on a busy machine its first ask may come later.
FIRST_JOB_REQUEST_WAIT_S = 90


def first_job_request(pool: str, token: str) -> list[tuple[str, int]]:
    """The stand-in's calls with `token`, once they hold the runner's first ask for a job (or the wait is over)."""
    deadline = time.monotonic() + FIRST_JOB_REQUEST_WAIT_S
    while ("/api/v4/jobs/request", 204) not in (calls := standin_calls(token)) and time.monotonic() < deadline:
        print(f"waiting up to {deadline - time.monotonic():.0f} s for pool {pool}'s first ask for a job", flush=True)
        time.sleep(2)
    return calls


def manager_pods(cluster, pool: str) -> list[dict]:
    return [p for p in cluster.list("v1", "Pod", namespace=MANAGER_NS, label_selector=f"release={release(pool)}")
            if not p["metadata"].get("deletionTimestamp")]


@pytest.mark.usefixtures("converged")
def test_runner_managers_run_for_real_and_register_with_the_standin(fleet, real_components):
    real_components.require("gitlab-runner")
    for pool, token in TOKENS.items():
        pods = manager_pods(fleet, pool)
        assert len(pods) == 1, [p["metadata"]["name"] for p in pods]
        pod = pods[0]
        assert pod["spec"]["nodeName"] == REAL_NODE
        status = pod["status"]["containerStatuses"][0]
        assert status["ready"] and status["restartCount"] == 0, status
        calls = first_job_request(pool, token)
        assert ("/api/v4/runners/verify", 200) in calls, f"{pool} never registered: {calls[-5:]}"
        assert ("/api/v4/jobs/request", 204) in calls, f"{pool} never asked for a job"
        log = fleet.core.read_namespaced_pod_log(pod["metadata"]["name"], MANAGER_NS)
        assert token not in log
        assert f"runner_name={pool}" in log.replace("\x1b[0;m", "").replace("[0;m", ""), \
            "the runner should go by the pool's name (runners.name)"


# --- a job, end to end: stand-in -> real runner -> job pod on the real node -> trace ---------

E2E_POOL = "cpu-real"
JOB_LABEL_POOL = "manager.runner.gitlab.com/name"
JOB_ANNOTATION_ID = "job.runner.gitlab.com/id"
# CAP_SYS_ADMIN is capability 21: a privileged container has it, a default one does not.
CAP_SYS_ADMIN_BIT = 21


@pytest.fixture(scope="module")
def real_jobs(fleet, converged, real_components):
    """Two jobs the real runner of the cpu-real pool takes from the stand-in and runs:
    {"ok"|"failing": (the job as the stand-in saw it, the job pod as the runner created it)}."""
    real_components.require("gitlab-runner")
    standin = StandInJobs(Layout.from_environment().gitlab_standin_url)
    # As a GitLab admin made them: the runners of our pools' tokens, with the pools' tags.
    standin.register_runners(pools())
    tags = next(p["tags"] for p in pools() if p["name"] == E2E_POOL)
    queued = {
        "ok": standin.queue(tags, [f"echo gpuci-e2e-{RUN_ID}", "grep CapEff /proc/self/status", "id -u"],
                            BASE_IMAGE, "e2e-ok"),
        "failing": standin.queue(tags, [f"echo gpuci-e2e-fails-{RUN_ID}", "exit 7"], BASE_IMAGE, "e2e-failing"),
    }
    pods: dict[int, dict] = {}
    deadline = time.monotonic() + 300
    jobs = {name: standin.job(job_id) for name, job_id in queued.items()}
    while time.monotonic() < deadline and any(j["state"] in ("pending", "running") for j in jobs.values()):
        # The runner deletes a job pod when the job ends: catch each one while it exists.
        for pod in fleet.list("v1", "Pod", namespace=CPU_JOBS_NS, label_selector=f"{JOB_LABEL_POOL}={E2E_POOL}"):
            job_id = int(pod["metadata"].get("annotations", {}).get(JOB_ANNOTATION_ID, 0))
            if pod["spec"].get("nodeName") and job_id not in pods:
                pods[job_id] = pod
        jobs = {name: standin.job(job_id) for name, job_id in queued.items()}
        states = ", ".join(f"{name} {job['state']}" for name, job in jobs.items())
        print(f"waiting up to {deadline - time.monotonic():.0f} s for the runner's jobs: {states}", flush=True)
        time.sleep(1)
    return {name: (jobs[name], pods.get(job_id)) for name, job_id in queued.items()}


@pytest.mark.real_runner
def test_the_real_runner_runs_a_job_on_the_real_node(real_jobs):
    job, pod = real_jobs["ok"]
    assert job["state"] == "success", trace_text(job["trace"])[-3000:]
    trace = trace_text(job["trace"])
    assert f"gpuci-e2e-{RUN_ID}" in trace
    assert "Using Kubernetes executor" in trace
    # It cloned the stand-in's project over HTTP with its job token, at the commit the stand-in sent.
    assert f"Checking out {job['sha'][:8]} as detached HEAD (ref is main)" in trace, trace[-3000:]
    assert pod is not None, "the runner's job pod was never seen"
    assert pod["spec"]["nodeName"] == REAL_NODE
    # The build container was privileged for real: it held CAP_SYS_ADMIN.
    cap_eff = int(next(line for line in trace.splitlines() if line.startswith("CapEff:")).split()[1], 16)
    assert cap_eff >> CAP_SYS_ADMIN_BIT & 1, trace


@pytest.mark.real_runner
def test_a_failing_job_reports_its_exit_code(real_jobs):
    job, _pod = real_jobs["failing"]
    assert (job["state"], job["exit_code"], job["failure_reason"]) == ("failed", 7, "script_failure"), job["state"]
    assert f"gpuci-e2e-fails-{RUN_ID}" in trace_text(job["trace"])


@pytest.mark.real_runner
def test_the_runner_made_the_job_pod_our_docs_describe(fleet, real_jobs):
    _job, pod = real_jobs["ok"]
    assert pod is not None, "the runner's job pod was never seen"
    expected = job_pod(stored_runner(fleet, E2E_POOL), CPU_JOBS_NS)["spec"]
    spec = pod["spec"]
    assert spec["nodeSelector"] == expected["nodeSelector"] == {REAL_NODE_LABEL: "true"}
    for toleration in expected["tolerations"]:
        assert toleration in spec["tolerations"], spec["tolerations"]
    assert spec["affinity"] == expected["affinity"], "the pool's CPU-only affinity (a pod_spec patch) is missing"
    assert "runtimeClassName" not in spec and "runtimeClassName" not in expected
    containers = {c["name"]: c for c in spec["containers"]}
    assert set(containers) == {"build", "helper"}
    assert containers["build"]["resources"]["requests"] == {"cpu": "100m", "memory": "64Mi"}
    assert containers["build"]["image"] == BASE_IMAGE
    # Privilege is the build container's alone: not the helper's, not the init container's.
    privileged = sorted(c["name"] for c in spec["containers"] + spec.get("initContainers", [])
                        if (c.get("securityContext") or {}).get("privileged"))
    assert privileged == ["build"], privileged
    expected_privileged = sorted(c["name"] for c in expected["containers"]
                                 if (c.get("securityContext") or {}).get("privileged"))
    assert expected_privileged == privileged


@pytest.mark.real_runner
def test_no_runner_token_reaches_the_job(real_jobs):
    token = TOKENS[E2E_POOL]
    for job, pod in real_jobs.values():
        assert token not in job["trace"]
        assert token not in json.dumps(pod)
    assert token not in STANDIN_RECORD.read_text()


@pytest.mark.usefixtures("converged")
def test_rotating_a_token_updates_the_secret_and_restarts_the_manager(fleet, playbooks, real_components):
    before = fleet.apps.read_namespaced_deployment(release("l40s"), MANAGER_NS).spec.template.metadata.annotations or {}
    tokens = dict(TOKENS, l40s=ROTATED_L40S_TOKEN)
    run = playbooks.run(PLAYBOOK, extra_vars=fleet_vars(pools(tokens)), verbosity=3, diff=True).assert_ok()
    assert run.changed > 0
    assert ROTATED_L40S_TOKEN not in run.output and TOKENS["l40s"] not in run.output
    holders = sorted(key for key, text in secret_texts(fleet).items() if ROTATED_L40S_TOKEN in text)
    assert holders == [(MANAGER_NS, f"{release('l40s')}-token")]
    after = fleet.apps.read_namespaced_deployment(release("l40s"), MANAGER_NS).spec.template.metadata.annotations or {}
    assert after.get("gpuci.runners/token-version") != before.get("gpuci.runners/token-version"), \
        "the manager reads its token at start; a new token must roll the Deployment"
    # Only the rotated pool restarts.
    other = fleet.apps.read_namespaced_deployment(release("cpu"), MANAGER_NS).spec.template.metadata.annotations
    assert "gpuci.runners/token-version" not in (other or {})
    if "gitlab-runner" not in real_components:
        real_components.note_simulated("gitlab-runner")  # no manager runs, so none uses a token
        return
    # The new manager uses the new token; once the old one is gone, nobody uses the old token.
    deadline = time.monotonic() + 180
    while len(fleet.list("v1", "Pod", namespace=MANAGER_NS, label_selector=f"release={release('l40s')}")) > 1 \
            and time.monotonic() < deadline:
        time.sleep(2)
    old_gone = time.time()
    while ("/api/v4/jobs/request", 204) not in standin_calls(ROTATED_L40S_TOKEN) and time.monotonic() < deadline:
        time.sleep(2)
    time.sleep(6)  # a few polls of the new manager
    assert ("/api/v4/jobs/request", 204) in standin_calls(ROTATED_L40S_TOKEN, since=old_gone - 60)
    assert standin_calls(TOKENS["l40s"], since=old_gone) == [], "the old token was still used"


# --- a converge never kills a running job -------------------------------------------------------

ROTATED_E2E_TOKEN = f"glrt-gpuci-rotated-{E2E_POOL}-{RUN_ID}"


def manager_of(trace: str) -> str:
    """The runner manager pod that ran a job, from the executor's "Running on <pod> via <manager>..." line."""
    line = next(line for line in trace_text(trace).splitlines() if line.startswith("Running on "))
    return line.split(" via ", 1)[1].rstrip(".")


def converge_during_a_long_job(fleet, playbooks, changed_pools: list[dict], mark: str) -> tuple[dict, dict, str]:
    """Start a long job (`mark`) on the e2e pool, converge `changed_pools` while it runs, queue a job after.

    The long job runs until the test releases it once the converge has returned, however long the
    converge takes. (the long job as it ended, the next job as it ended, the manager pod that ran it)."""
    standin = StandInJobs(Layout.from_environment().gitlab_standin_url)
    standin.register_runners(changed_pools)
    tags = next(p["tags"] for p in changed_pools if p["name"] == E2E_POOL)
    with standin.held_job(tags, mark, GITLAB_RUNNER_HELPER_IMAGE, "long") as long_job:
        manager = manager_of(standin.wait_started(long_job, mark, 120)["trace"])
        playbooks.run(PLAYBOOK, extra_vars=fleet_vars(changed_pools)).assert_ok()
        held = standin.job(long_job)
    assert held["state"] == "running", \
        "the converge returned after the held job ended: no proof\n" + trace_text(held["trace"])[-3000:]
    ended = standin.wait_finished(long_job, 120)
    after = standin.wait_finished(standin.queue(tags, [f"echo next-job-{RUN_ID}"], BASE_IMAGE, "next"), 180)
    return ended, after, manager


def assert_the_job_survived(ended: dict, after: dict, manager: str, fleet, mark: str) -> None:
    trace = trace_text(ended["trace"])
    assert ended["state"] == "success", trace[-3000:]
    assert f"{mark}-starts" in trace and f"{mark}-ends" in trace, trace[-3000:]
    assert after["state"] == "success", trace_text(after["trace"])[-3000:]
    assert manager_of(after["trace"]) != manager, "the next job should go to the new manager"
    assert manager not in [p["metadata"]["name"] for p in manager_pods(fleet, E2E_POOL)], \
        "the old manager should be gone once its job ended"


@pytest.mark.usefixtures("converged")
@pytest.mark.real_runner
def test_a_converge_during_a_job_lets_the_job_finish(fleet, playbooks, real_components):
    """A new concurrency rolls the manager: the old one stops gracefully (SIGQUIT), its job ends with success."""
    real_components.require("gitlab-runner")
    changed = [dict(p, concurrent=3) if p["name"] == E2E_POOL else p for p in pools()]
    mark = f"concurrency-{RUN_ID}"
    ended, after, manager = converge_during_a_long_job(fleet, playbooks, changed, mark)
    assert_the_job_survived(ended, after, manager, fleet, mark)
    assert 'concurrent = 3' in fleet.core.read_namespaced_config_map(release(E2E_POOL), MANAGER_NS).data["config.toml"]


@pytest.mark.usefixtures("converged")
@pytest.mark.real_runner
def test_a_token_rotation_during_a_job_lets_the_job_finish(fleet, playbooks, real_components):
    """A new token restarts the manager (it reads its token at start): the running job still ends with success."""
    real_components.require("gitlab-runner")
    rotated = pools(dict(TOKENS, **{E2E_POOL: ROTATED_E2E_TOKEN}))
    mark = f"rotation-{RUN_ID}"
    ended, after, manager = converge_during_a_long_job(fleet, playbooks, rotated, mark)
    assert_the_job_survived(ended, after, manager, fleet, mark)
    assert after["runner"]["token_sha256"] == token_fingerprint(ROTATED_E2E_TOKEN), after["runner"]


# --- pruning and teardown -------------------------------------------------------------------

@pytest.mark.usefixtures("converged")
def test_absent_and_undeclared_pools_are_removed(fleet, playbooks):
    tokens = dict(TOKENS, l40s=ROTATED_L40S_TOKEN)
    declared = [p for p in pools(tokens) if p["name"] in ("l40s", "a100-mig")]
    declared[1] = {"name": "a100-mig", "state": "absent"}  # the cpu pools are simply gone
    run = playbooks.run(PLAYBOOK, extra_vars=fleet_vars(declared)).assert_ok()
    assert run.changed > 0
    kept, removed = ["l40s"], ["a100-mig", "cpu", "cpu-real"]
    releases = {s.split(".v1.")[1].rsplit(".v", 1)[0] for s in helm_release_payloads(fleet, MANAGER_NS)}
    assert releases == {release(p) for p in kept}
    for kind, api in (("ServiceAccount", "v1"), ("Secret", "v1"), ("Role", "rbac.authorization.k8s.io/v1"),
                      ("RoleBinding", "rbac.authorization.k8s.io/v1")):
        names = fleet_objects(fleet, kind, api)
        assert not [n for n in names for p in removed if release(p) in n], f"{kind}: {names}"
        assert [n for n in names if release("l40s") in n], f"{kind} of the kept pool is gone: {names}"
    # The cpu pool's job namespace was the role's and no pool uses it now.
    assert fleet_objects(fleet, "Namespace") == sorted([f"/{GPU_JOBS_NS}", f"/{MANAGER_NS}"])
    rerun = playbooks.run(PLAYBOOK, extra_vars=fleet_vars(declared)).assert_ok()
    assert rerun.changed == 0, rerun.output[-4000:]


def test_state_absent_removes_everything_we_made(fleet, playbooks):
    check = playbooks.run(PLAYBOOK, extra_vars=fleet_vars([], gitlab_runner_state="absent"), check=True).assert_ok()
    assert check.changed > 0 and fleet_objects(fleet, "Namespace"), "check mode must not remove anything"
    playbooks.run(PLAYBOOK, extra_vars=fleet_vars([], gitlab_runner_state="absent")).assert_ok()
    for kind, api in (("ServiceAccount", "v1"), ("Secret", "v1"), ("Role", "rbac.authorization.k8s.io/v1"),
                      ("RoleBinding", "rbac.authorization.k8s.io/v1"), ("Namespace", "v1")):
        assert fleet_objects(fleet, kind, api) == [], kind
    for namespace in OUR_NAMESPACES:
        with pytest.raises(ApiException) as gone:
            fleet.core.read_namespace(namespace)
        assert gone.value.status == 404, namespace
    assert not list(fleet.apps.list_deployment_for_all_namespaces(label_selector=FLEET_SELECTOR).items)
