# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the gitlab_runner tests need beyond helpers.py.

- `job_pod`: the pod GitLab's Kubernetes executor would create for a job of a
  runner, built from the runner's config.toml the way the executor builds it
  (native keys first, then the pod_spec patches with real strategic merge).
- `helm_release_payloads` / `secret_texts`: decode what Helm and Kubernetes
  store, so a token can be searched for in plain text.
- `StandInJobs` / `trace_text`: queue a job on the testbed's GitLab stand-in
  for one runner, wait for the runner's report, read its trace.
"""
from __future__ import annotations

import base64
import contextlib
import gzip
import json
import re
import sys
import time
import tomllib
import urllib.request
import uuid

from helpers import REPO_ROOT, Cluster, decode_helm_record, strategic_merge

# `make venv` links the checkout here, so the filter's builder can be imported.
COLLECTIONS = REPO_ROOT / ".collections"

# The helper image the executor uses when config.toml names none; the testbed
# pulls nothing, so only the shape matters.
DEFAULT_HELPER_IMAGE = "registry.gitlab.com/gitlab-org/gitlab-runner/gitlab-runner-helper:x86_64-v18.5.0"
ADVANCED_POD_SPEC_FLAG = "FF_USE_ADVANCED_POD_SPEC_CONFIGURATION"
HELM_RELEASE_PREFIX = "sh.helm.release.v1."
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@contextlib.contextmanager
def fleet_of_its_own(cluster: Cluster, playbooks, playbook: str, teardown_vars: dict, leftovers):
    """A test module's own fleet: nothing of it before (a run may have been interrupted), nothing after.

    leftovers(cluster) lists what of the fleet is on the cluster; teardown_vars remove it (state absent).
    """
    if leftovers(cluster):
        playbooks.run(playbook, extra_vars=teardown_vars).assert_ok()
    yield cluster
    if leftovers(cluster):
        playbooks.run(playbook, extra_vars=teardown_vars)


def runner_table(config_toml: str) -> dict:
    """The single [[runners]] table of a pool's config.toml."""
    runners = tomllib.loads(config_toml)["runners"]
    assert isinstance(runners, list) and len(runners) == 1, runners
    return runners[0]


def render_runner(pool: dict) -> dict:
    """The [[runners]] table the gitlab_runner_config filter renders for `pool` (no chart involved)."""
    if str(COLLECTIONS) not in sys.path:
        sys.path.insert(0, str(COLLECTIONS))
    from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.config import gitlab_runner_config

    return runner_table(gitlab_runner_config(pool))


def tolerations_from_map(node_tolerations: dict[str, str]) -> list[dict]:
    """GitLab's node_tolerations map as the executor expands it.

    `"key=value" = "Effect"` is an Equal toleration, `"key" = "Effect"` an
    Exists one; an empty effect tolerates every effect.
    """
    tolerations = []
    for name, effect in sorted(node_tolerations.items()):
        key, _sep, value = name.partition("=")
        toleration = {"key": key, "operator": "Equal", "value": value} if value else {"key": key, "operator": "Exists"}
        if effect:
            toleration["effect"] = effect
        tolerations.append(toleration)
    return tolerations


def _privileged(kube: dict, context_key: str) -> bool:
    """GitLab Runner's rule: the container's own security context, else the executor-wide `privileged`."""
    own = (kube.get(context_key) or {}).get("privileged")
    return bool(kube.get("privileged") if own is None else own)


def _container(name: str, image: str, kube: dict, resource_keys: dict[str, str]) -> dict:
    container = {"name": name, "image": image, "command": ["sh", "-c", "sleep 3600"]}
    requests = {res: kube[key] for key, res in resource_keys.items() if key.endswith("_request") and key in kube}
    limits = {res: kube[key] for key, res in resource_keys.items() if key.endswith("_limit") and key in kube}
    if requests or limits:
        container["resources"] = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    if _privileged(kube, f"{name}_container_security_context"):
        container["securityContext"] = {"privileged": True}
    return container


def job_pod(runner: dict, namespace: str, name: str | None = None, extra_tolerations: list[dict] | None = None) -> dict:
    """The job pod for `runner` (a [[runners]] table), ready to create.

    `extra_tolerations` lets a test widen what the pod tolerates, to show that
    something other than taints keeps it off a node.
    """
    kube = runner["kubernetes"]
    build_resources = {"cpu_request": "cpu", "memory_request": "memory", "cpu_limit": "cpu", "memory_limit": "memory"}
    helper_resources = {f"helper_{key}": res for key, res in build_resources.items()}
    spec = {
        "restartPolicy": "Never",
        "automountServiceAccountToken": False,
        "containers": [
            _container("build", kube["image"], kube, build_resources),
            _container("helper", kube.get("helper_image", DEFAULT_HELPER_IMAGE), kube, helper_resources),
        ],
    }
    if kube.get("service_account"):
        spec["serviceAccountName"] = kube["service_account"]
    if kube.get("node_selector"):
        spec["nodeSelector"] = dict(kube["node_selector"])
    tolerations = tolerations_from_map(kube.get("node_tolerations", {})) + list(extra_tolerations or [])
    if tolerations:
        spec["tolerations"] = tolerations
    if kube.get("runtime_class_name"):
        spec["runtimeClassName"] = kube["runtime_class_name"]
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name or f"runner-{runner['name']}-job-{uuid.uuid4().hex[:6]}",
            "namespace": namespace,
            "labels": {"app.kubernetes.io/part-of": "gpuci-runners", "gpuci.runners/test": "gitlab-runner"},
        },
        "spec": spec,
    }
    # GitLab applies pod_spec patches only with the feature flag on.
    if runner.get("feature_flags", {}).get(ADVANCED_POD_SPEC_FLAG):
        for entry in kube.get("pod_spec", []):
            assert entry["patch_type"] == "strategic", entry
            pod = strategic_merge(pod, {"spec": json.loads(entry["patch"])})
    return pod


def scheduled_or_refused(pod: dict) -> bool:
    """True once the scheduler has placed the pod or said it cannot."""
    if pod["spec"].get("nodeName"):
        return True
    return any(c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
               for c in (pod.get("status") or {}).get("conditions") or [])


def helm_release_payloads(cluster: Cluster, namespace: str) -> dict[str, str]:
    """Helm's release records in `namespace`: Secret name -> decoded JSON text.

    """
    payloads = {}
    for secret in cluster.core.list_namespaced_secret(namespace, label_selector="owner=helm").items:
        if secret.metadata.name.startswith(HELM_RELEASE_PREFIX):
            payloads[secret.metadata.name] = json.dumps(decode_helm_record(secret.data["release"]))
    return payloads


def secret_texts(cluster: Cluster) -> dict[tuple[str, str], str]:
    """Every Secret in the cluster, (namespace, name) -> its decoded values joined."""
    texts = {}
    for secret in cluster.core.list_secret_for_all_namespaces().items:
        values = []
        for raw in (secret.data or {}).values():
            decoded = base64.b64decode(raw)
            values.append(decoded.decode(errors="replace"))
            if secret.metadata.name.startswith(HELM_RELEASE_PREFIX):
                values.append(gzip.decompress(base64.b64decode(decoded)).decode(errors="replace"))
        texts[(secret.metadata.namespace, secret.metadata.name)] = "\n".join(values)
    return texts


def configmap_texts(cluster: Cluster) -> dict[tuple[str, str], str]:
    """Every ConfigMap in the cluster, (namespace, name) -> its data values joined."""
    return {(cm.metadata.namespace, cm.metadata.name): "\n".join((cm.data or {}).values())
            for cm in cluster.core.list_config_map_for_all_namespaces().items}


def scoped_snapshot(cluster: Cluster, namespaces: set[str], names: set[str]) -> dict:
    """cluster.snapshot() cut down to what this module may touch.

    Other roles' tests change the shared testbed at the same time; only our
    namespaces (and cluster-scoped objects bearing our names) are compared.
    """
    return {key: version for key, version in cluster.snapshot().items()
            if key[1] in namespaces or (not key[1] and key[2] in names | namespaces)}


# A held job (StandInJobs.queue_held) fails once this passes without its release: a bound, not a timing.
HELD_JOB_BOUND_S = 600
# Any `glpat-` token is an access token to the stand-in (tools/testbed/gitlab_standin.py).
HARNESS_ACCESS_TOKEN = "glpat-gpuci-test-harness"


def release_branch(mark: str) -> str:
    return f"release-{mark}"


class StandInJobs:
    """Register runners on the testbed's GitLab stand-in, queue jobs, read back what the runner reported.

    The stand-in routes a job as GitLab does: to a runner whose tag_list holds
    all the job's tags (an untagged job only to one with run_untagged, none to
    a paused one). A runner's tags live in GitLab, not in config.toml, so a
    test registers its pools' runners with the tags an admin would have given
    them (lib/gitlab_seed.py derives them as the gitlab_runner role would).
    """

    def __init__(self, base_url: str):
        self.base_url = base_url.rstrip("/")

    def _call(self, method: str, path: str, body: dict | None = None, headers: dict | None = None) -> dict:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.base_url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json", **(headers or {})})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())

    def register_runners(self, pools: list[dict]) -> None:
        """Make (or update) the runner of each pool with a `glrt-` token, with the pool's tags."""
        from lib.gitlab_seed import seed_runners  # tools/testbed, put on sys.path by conftest.py

        for runner in seed_runners(pools):
            self._call("POST", "/gpuci-standin/runners", runner)

    def queue(self, tags: list[str], script: list[str], image: str, name: str, timeout: int | None = None) -> int:
        """A job for whichever runner may take these tags; its id. `timeout`: the job's, in seconds."""
        body = {"tags": tags, "script": script, "image": image, "name": name}
        if timeout is not None:
            body["timeout"] = timeout
        return self._call("POST", "/gpuci-standin/jobs", body)["id"]

    def queue_held(self, tags: list[str], mark: str, image: str, name: str) -> int:
        """A job that runs until `release(mark)` (failing after about HELD_JOB_BOUND_S without it); its id.

        Its script polls the stand-in's project, through the remote of the job's own clone (which
        carries the job's token), for the branch `release(mark)` makes: a test that must act while a
        job runs gives the job no fixed length to race against. `image` needs git (the testbed's
        runner helper image has it)."""
        released = f"git ls-remote --exit-code origin refs/heads/{release_branch(mark)} >/dev/null"
        polls = HELD_JOB_BOUND_S // 2
        return self.queue(tags, [f"echo {mark}-starts",
                                 f"for poll in $(seq {polls}); do {released} && break; sleep 2; done",
                                 released, f"echo {mark}-ends"], image, name)

    @contextlib.contextmanager
    def held_job(self, tags: list[str], mark: str, image: str, name: str):
        """`queue_held` for the `with` block, which gets the job's id; the job is released however the
        block ends: a held job left running would hold its manager's graceful stop in the teardown."""
        job_id = self.queue_held(tags, mark, image, name)
        try:
            yield job_id
        finally:
            self.release(mark)

    def wait_started(self, job_id: int, mark: str, timeout_s: float) -> dict:
        """The held job `mark` once its script has started (its first line is in the trace); shows progress."""
        deadline = time.monotonic() + timeout_s
        job = self.job(job_id)
        while f"{mark}-starts" not in trace_text(job["trace"]):
            assert time.monotonic() < deadline, f"the held job {mark} never started: {job['state']}"
            print(f"waiting up to {deadline - time.monotonic():.0f} s for the held job {mark}'s script to start",
                  flush=True)
            time.sleep(2)
            job = self.job(job_id)
        return job

    def release(self, mark: str) -> None:
        """End the held job `mark`: the branch its script waits for, committed through the REST API."""
        self._call("POST", "/api/v4/projects/1/repository/commits",
                   {"branch": release_branch(mark), "commit_message": f"release {mark}",
                    "actions": [{"action": "create", "file_path": "released", "content": mark}]},
                   headers={"PRIVATE-TOKEN": HARNESS_ACCESS_TOKEN})

    def cancel(self, job_id: int) -> str:
        """Cancel the job as a user does in GitLab; its state after (`canceling` while it runs)."""
        return self._call("POST", f"/gpuci-standin/jobs/{job_id}/cancel", {})["state"]

    def outage(self, seconds: int) -> None:
        """Make the stand-in refuse connections for `seconds`, keeping its jobs and runners."""
        self._call("POST", "/gpuci-standin/outage", {"seconds": seconds})

    def answers(self) -> bool:
        try:
            self._call("GET", "/gpuci-standin/runners")
            return True
        except OSError:  # refused, or reset while the stand-in closes its socket
            return False

    def job(self, job_id: int) -> dict:
        return self._call("GET", f"/gpuci-standin/jobs/{job_id}")

    def wait_finished(self, job_id: int, timeout_s: float) -> dict:
        """The job once the runner reported a final state; shows progress while it waits."""
        deadline = time.monotonic() + timeout_s
        job = self.job(job_id)
        while job["state"] in ("pending", "running", "canceling") and time.monotonic() < deadline:
            print(f"waiting up to {deadline - time.monotonic():.0f} s more for stand-in job {job_id}: {job['state']}",
                  flush=True)
            time.sleep(3)
            job = self.job(job_id)
        return job


def trace_text(trace: str) -> str:
    """A job trace without the runner's per-line timestamps, stream markers and colour codes."""
    lines = []
    for line in trace.splitlines():
        # "2026-11-24T00:12:34.166501Z 01O text": timestamp, stream/flags, text.
        parts = line.split(" ", 2)
        text = parts[2] if len(parts) == 3 and parts[0].endswith("Z") else line
        lines.append(ANSI_ESCAPE.sub("", text))
    return "\n".join(lines)
