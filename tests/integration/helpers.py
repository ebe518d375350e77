# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Run playbooks and read the testbed cluster from integration tests.

Shared by every test module: running playbooks, snapshots, strategic merge,
Helm release records and throw-away inventories with GPU hosts.
"""
from __future__ import annotations

import base64
import contextlib
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import yaml
from kubernetes import client, config, dynamic
from kubernetes.client.rest import ApiException

REPO_ROOT = Path(__file__).resolve().parents[2]
TESTBED = REPO_ROOT / "tools" / "testbed"
sys.path.insert(0, str(TESTBED))
from lib.layout import Layout, ansible_playbook  # noqa: E402  (the testbed's own: where its kubeconfig is)
LOCAL_INVENTORY = REPO_ROOT / "inventories" / "local"
# Objects that controllers rewrite on their own; they are left out of snapshots.
VOLATILE_KINDS = {"Event", "Lease", "Node", "Endpoints", "EndpointSlice", "ControllerRevision"}


@dataclass
class PlaybookRun:
    rc: int
    output: str

    @property
    def recap(self) -> dict[str, int]:
        """Totals of the PLAY RECAP over all hosts (ok, changed, failed, ...)."""
        totals: dict[str, int] = {}
        for key, value in re.findall(r"\b(ok|changed|unreachable|failed|skipped|rescued|ignored)=(\d+)", self.output):
            totals[key] = totals.get(key, 0) + int(value)
        return totals

    @property
    def changed(self) -> int:
        return self.recap.get("changed", 0)

    def assert_ok(self) -> "PlaybookRun":
        assert self.rc == 0, f"playbook failed (rc={self.rc}):\n{self.output[-6000:]}"
        return self

    def assert_failed_with(self, *fragments: str) -> "PlaybookRun":
        assert self.rc != 0, f"playbook was expected to fail:\n{self.output[-4000:]}"
        for fragment in fragments:
            assert fragment in self.output, f"{fragment!r} not in output:\n{self.output[-4000:]}"
        return self


class Cluster:
    """The testbed seen through the Kubernetes Python client."""

    def __init__(self, kubeconfig: Path):
        self.kubeconfig = kubeconfig
        self.api_client = config.new_client_from_config(config_file=str(kubeconfig))
        self.core = client.CoreV1Api(self.api_client)
        self.apps = client.AppsV1Api(self.api_client)
        self.dynamic = dynamic.DynamicClient(self.api_client)

    def resource(self, api_version: str, kind: str):
        return self.dynamic.resources.get(api_version=api_version, kind=kind)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None):
        try:
            return self.resource(api_version, kind).get(name=name, namespace=namespace).to_dict()
        except ApiException as err:
            if err.status == 404:
                return None
            raise

    def list(self, api_version: str, kind: str, namespace: str | None = None, label_selector: str = "") -> list[dict]:
        return self.resource(api_version, kind).get(namespace=namespace, label_selector=label_selector).to_dict()["items"]

    def apply_pod(self, pod: dict) -> dict:
        """Create a pod (from a dict) and return it as created."""
        return self.api_client.sanitize_for_serialization(
            self.core.create_namespaced_pod(pod["metadata"].get("namespace", "default"), pod))

    def wait_pod(self, name: str, namespace: str, until, timeout: float = 60) -> dict:
        """Poll a pod until `until(pod_dict)` is true; return the last pod seen."""
        deadline = time.monotonic() + timeout
        while True:
            pod = self.api_client.sanitize_for_serialization(self.core.read_namespaced_pod(name, namespace))
            if until(pod) or time.monotonic() > deadline:
                return pod
            time.sleep(0.5)

    def pod_events(self, name: str, namespace: str) -> list[dict]:
        events = self.core.list_namespaced_event(namespace, field_selector=f"involvedObject.name={name}")
        return [{"reason": e.reason, "message": e.message} for e in events.items]

    def workload_story(self, namespace: str) -> str:
        """What a failure report needs about a namespace's workloads: their
        status, deletion marks and owners, the pods and the latest events."""
        lines = []
        for kind in ("Deployment", "ReplicaSet", "Pod"):
            for item in self.list("apps/v1" if kind != "Pod" else "v1", kind, namespace):
                meta, status = item["metadata"], item.get("status") or {}
                owners = [f"{o['kind']}/{o['name']}" for o in meta.get("ownerReferences") or []]
                conditions = [f"{c['type']}={c['status']}({c.get('reason', '')})" for c in status.get("conditions") or []]
                lines.append(f"{kind} {meta['name']} gen={meta.get('generation')} observed={status.get('observedGeneration')} "
                             f"replicas={status.get('replicas')} available={status.get('availableReplicas')} "
                             f"phase={status.get('phase')} node={(item.get('spec') or {}).get('nodeName')} "
                             f"deleting={meta.get('deletionTimestamp')} finalizers={meta.get('finalizers')} "
                             f"owners={owners} created={meta.get('creationTimestamp')} conditions={conditions}")
        events = sorted(self.core.list_namespaced_event(namespace).items,
                        key=lambda e: str(e.last_timestamp or e.event_time or ""))
        lines += [f"event {e.last_timestamp or e.event_time} {e.involved_object.kind}/{e.involved_object.name} "
                  f"{e.reason}: {e.message}" for e in events[-40:]]
        return "\n".join(lines)

    def snapshot(self) -> dict[tuple[str, str, str], str]:
        """Every listable object (but controller-churned kinds) -> its resourceVersion."""
        objects: dict[tuple[str, str, str], str] = {}
        for resource in self.dynamic.resources.search():
            if "list" not in (resource.verbs or []) or resource.kind in VOLATILE_KINDS or "/" in resource.name:
                continue
            if resource.kind.endswith("List") or resource.kind.endswith("Review"):
                continue
            try:
                items = resource.get().to_dict().get("items", [])
            except ApiException:
                continue
            for item in items:
                meta = item["metadata"]
                objects[(f"{resource.group_version}/{resource.kind}", meta.get("namespace") or "", meta["name"])] = \
                    meta.get("resourceVersion", "")
        return objects


class Playbooks:
    """Run ansible-playbook from the repository root against the testbed."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster

    def run(self, playbook: str, *, inventory: Path | str = LOCAL_INVENTORY, extra_vars: dict | None = None,
            check: bool = False, diff: bool = False, verbosity: int = 0, tags: str | None = None,
            vars_files: tuple[Path, ...] = (), vault_password_file: Path | None = None,
            timeout: float = 1200, env: dict[str, str] | None = None) -> PlaybookRun:
        """vars_files: more `-e @file`, after extra_vars (Ansible Vault files, say, opened with vault_password_file);
        env: more environment (ANSIBLE_* settings, say)."""
        cmd = [ansible_cli("ansible-playbook"), "-i", str(inventory)]
        path = Path(playbook)
        cmd.append(str(path if path.is_absolute() else REPO_ROOT / "playbooks" / playbook))
        with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
            json.dump(extra_vars or {}, handle)
        cmd += ["-e", f"@{handle.name}"]
        for vars_file in vars_files:
            cmd += ["-e", f"@{vars_file}"]
        if vault_password_file:
            cmd += ["--vault-password-file", str(vault_password_file)]
        if check:
            cmd.append("--check")
        if diff:
            cmd.append("--diff")
        if tags:
            cmd += ["--tags", tags]
        if verbosity:
            cmd.append("-" + "v" * verbosity)
        # The testbed's helm and kubectl come first, whether or not make set PATH.
        env = dict(os.environ, ANSIBLE_CONFIG=str(REPO_ROOT / "ansible.cfg"), ANSIBLE_FORCE_COLOR="0",
                   ANSIBLE_NOCOLOR="1", GPUCI_KUBECONFIG=str(self.cluster.kubeconfig),
                   PATH=f"{testbed_bin_path()}:{os.environ.get('PATH', '')}", **(env or {}))
        try:
            proc = subprocess.run(cmd, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=timeout, check=False)
        finally:
            os.unlink(handle.name)
        return PlaybookRun(proc.returncode, proc.stdout + proc.stderr)


def ansible_cli(name: str) -> str:
    """An Ansible command (ansible-playbook, ansible-vault) of the venv, or beside GPUCI_ANSIBLE_PLAYBOOK: a GPU
    machine runs the tests from the unpacked bundle (docs/gpu-mode.md), without the venv."""
    return str(ansible_playbook().with_name(name))


def playbook_for_testbed(path: Path, tasks: list[dict]) -> str:
    """Write a one-play playbook of `tasks` for the testbed host, its modules pointed at the cluster as the
    collection's playbooks point them (module_defaults of the kubernetes group); return its path."""
    path.write_text(json.dumps([{
        "hosts": "testbed", "gather_facts": False,
        "module_defaults": {"group/gpuci.runners.kubernetes": {
            "kubeconfig": "{{ gpuci_kubeconfig }}", "context": "{{ gpuci_kube_context }}"}},
        "tasks": tasks}]))
    return str(path)


def load_yaml(path: Path):
    return yaml.safe_load(Path(path).read_text())


def testbed_bin_path() -> str:
    """The folders of the testbed's binaries, joined for PATH."""
    return subprocess.run(["bash", str(REPO_ROOT / "tools" / "testbed" / "build.sh"), "--print-paths"],
                          check=True, capture_output=True, text=True).stdout.strip()


def kubectl_binary() -> str:
    """The kubectl built for the testbed (the one on PATH may be another version)."""
    for folder in testbed_bin_path().split(":"):
        if (Path(folder) / "kubectl").is_file():
            return str(Path(folder) / "kubectl")
    raise FileNotFoundError("kubectl is not built; run bash tools/testbed/build.sh")


def strategic_merge(obj: dict, patch: dict) -> dict:
    """Apply a strategic-merge patch with kubectl's own implementation (no cluster needed)."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(obj, handle)
    try:
        proc = subprocess.run([kubectl_binary(), "patch", "--local", "--type", "strategic", "-f", handle.name,
                               "-p", json.dumps(patch), "-o", "json"], capture_output=True, text=True, check=True)
    finally:
        os.unlink(handle.name)
    return json.loads(proc.stdout)


def inventory_with_gpu_hosts(folder: Path, gpu_hosts: dict[str, dict]) -> Path:
    """inventories/local with `gpu_hosts` as hosts of the gpu_hosts group (run locally, no become)."""
    hosts = yaml.safe_load((LOCAL_INVENTORY / "hosts.yml").read_text())
    group = {}
    for name, host_vars in gpu_hosts.items():
        group[name] = {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}",
                       "ansible_become": False, **(host_vars or {})}
    hosts["all"]["children"]["gpu_hosts"] = {"hosts": group}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hosts.yml").write_text(yaml.safe_dump(hosts, sort_keys=False))
    (folder / "group_vars").symlink_to(LOCAL_INVENTORY / "group_vars", target_is_directory=True)
    return folder


def decode_helm_record(secret_data_release: str) -> dict:
    """A `sh.helm.release.v1.*` Secret's data.release: base64(base64(gzip(json)))."""
    raw = base64.b64decode(base64.b64decode(secret_data_release))
    return json.loads(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)


def helm_releases(cluster: Cluster, namespace: str | None = None) -> list[dict]:
    """Every Helm release record (one per revision): name, namespace, version, status, config, manifest."""
    if namespace:
        secrets = cluster.core.list_namespaced_secret(namespace, label_selector="owner=helm").items
    else:
        secrets = cluster.core.list_secret_for_all_namespaces(label_selector="owner=helm").items
    records = []
    for secret in secrets:
        record = decode_helm_record(secret.data["release"])
        records.append({"name": record["name"], "namespace": record["namespace"], "version": record["version"],
                        "status": record["info"]["status"], "config": record.get("config") or {},
                        "manifest": record.get("manifest", ""), "secret": secret.metadata.name})
    return records


@contextlib.contextmanager
def running_testbed() -> Iterator[Cluster]:
    """The testbed, built and started unless one runs already; stopped at the end only if started here.

    A build it cannot make (no Go on PATH and a binary not cached) fails the session: the tests never skip.
    """
    subprocess.run(["bash", str(TESTBED / "build.sh")], check=True)
    subprocess.run(["bash", str(TESTBED / "build-images.sh")], check=True)
    status = subprocess.run([sys.executable, str(TESTBED / "testbed.py"), "status"], capture_output=True, check=False)
    started_here = status.returncode != 0
    if started_here:
        subprocess.run([sys.executable, str(TESTBED / "testbed.py"), "up", "--ttl", "5400"], check=True)
    # GPUCI_TESTBED_STATE and the port variables select a private instance (tools/testbed/lib/layout.py).
    try:
        yield Cluster(Layout.from_environment().kubeconfig)
    finally:
        if started_here and not os.environ.get("GPUCI_KEEP_TESTBED"):
            subprocess.run([sys.executable, str(TESTBED / "testbed.py"), "down"], check=False)
