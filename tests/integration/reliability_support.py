# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What the reliability tests (bad inputs, secret hygiene, faults, teardown) share.

- `Scope` / `scoped_snapshot`: "the cluster is unchanged", read only where a
  run could write (its namespaces, cluster-scoped objects named after it), so
  other engineers' tests on the shared testbed do not show up as changes.
- `deployed_releases`: the deployed revision of each Helm release.
- `labelled_leftovers`: every object still carrying our part-of label.
- `control_component`, `wait_for_controllers_to_resume`: stop and start a
  testbed server, and wait until the controllers act again after a restart.
"""
from __future__ import annotations

import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field

from kubernetes.client.rest import ApiException

from helpers import REPO_ROOT, VOLATILE_KINDS, Cluster, helm_releases

PART_OF = "app.kubernetes.io/part-of=gpuci-runners"
TESTBED_CLI = [sys.executable, str(REPO_ROOT / "tools" / "testbed" / "testbed.py")]
# Cluster-scoped kinds a role or its charts may create.
CLUSTER_KINDS = (
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("node.k8s.io/v1", "RuntimeClass"),
    ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration"),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
)


@dataclass
class Scope:
    """Where one run could write: namespaces, and a prefix of its cluster-scoped names."""

    namespaces: set[str]
    name_prefix: str = ""
    cluster_kinds: tuple = CLUSTER_KINDS
    namespaced_cache: list = field(default_factory=list, repr=False)


def _namespaced_resources(cluster: Cluster) -> list:
    return [r for r in cluster.dynamic.resources.search()
            if r.namespaced and "list" in (r.verbs or []) and "/" not in r.name
            and r.kind not in VOLATILE_KINDS and not r.kind.endswith(("List", "Review"))]


def scoped_snapshot(cluster: Cluster, scope: Scope) -> dict[tuple[str, str, str], str]:
    """(kind, namespace, name) -> resourceVersion of every object inside `scope`.

    A namespace that does not exist contributes only its absence, so a
    snapshot of an untouched scope is cheap (one GET per namespace).
    """
    objects: dict[tuple[str, str, str], str] = {}
    for namespace in sorted(scope.namespaces):
        found = cluster.get("v1", "Namespace", namespace)
        if not found:
            continue
        objects[("Namespace", "", namespace)] = found["metadata"]["resourceVersion"]
        if not scope.namespaced_cache:
            scope.namespaced_cache = _namespaced_resources(cluster)
        for resource in scope.namespaced_cache:
            try:
                items = resource.get(namespace=namespace).to_dict().get("items", [])
            except ApiException:
                continue
            for item in items:
                objects[(f"{resource.group_version}/{resource.kind}", namespace, item["metadata"]["name"])] = \
                    item["metadata"].get("resourceVersion", "")
    if scope.name_prefix:
        for api_version, kind in scope.cluster_kinds:
            for item in _list_or_empty(cluster, api_version, kind):
                if item["metadata"]["name"].startswith(scope.name_prefix):
                    objects[(kind, "", item["metadata"]["name"])] = item["metadata"]["resourceVersion"]
    return objects


def cluster_scoped_snapshot(cluster: Cluster, kinds=CLUSTER_KINDS) -> dict[tuple[str, str], str]:
    """(kind, name) -> resourceVersion of every object of the cluster-scoped `kinds`."""
    return {(kind, item["metadata"]["name"]): item["metadata"]["resourceVersion"]
            for api_version, kind in kinds for item in _list_or_empty(cluster, api_version, kind)}


def snapshot_diff(before: dict, after: dict) -> dict[str, list]:
    """What appeared, went away or changed between two snapshots."""
    return {
        "added": sorted(set(after) - set(before)),
        "removed": sorted(set(before) - set(after)),
        "changed": sorted(key for key in set(before) & set(after) if before[key] != after[key]),
    }


def _list_or_empty(cluster: Cluster, api_version: str, kind: str) -> list[dict]:
    try:
        return cluster.list(api_version, kind)
    except Exception:  # the kind is not served (e.g. a CRD not installed)
        return []


def deployed_releases(cluster: Cluster, namespace: str | None = None) -> dict[tuple[str, str], dict]:
    """(namespace, name) -> the record of the revision Helm marks `deployed`."""
    return {(r["namespace"], r["name"]): r for r in helm_releases(cluster, namespace) if r["status"] == "deployed"}


def labelled_leftovers(cluster: Cluster, selector: str = PART_OF) -> list[tuple[str, str, str]]:
    """(kind, namespace, name) of every listable object, any namespace, matching `selector`."""
    leftovers = []
    for resource in cluster.dynamic.resources.search():
        if "list" not in (resource.verbs or []) or "/" in resource.name or resource.kind.endswith(("List", "Review")):
            continue
        if resource.kind in {"Event"}:
            continue
        try:
            items = resource.get(label_selector=selector).to_dict().get("items", [])
        except ApiException:
            continue
        leftovers += [(resource.kind, item["metadata"].get("namespace") or "", item["metadata"]["name"])
                      for item in items]
    return sorted(set(leftovers))


def control_component(verb: str, component: str = "kube-apiserver") -> None:
    """Stop or start one testbed server (fault tests); start waits for /readyz."""
    subprocess.run(TESTBED_CLI + [verb, component], check=True, cwd=REPO_ROOT, timeout=180)


def wait_for_controllers_to_resume(cluster: Cluster, timeout: float = 180) -> None:
    """Wait until a probe Deployment's pod is available on a simulated node, then remove the probe.

    After the API server restarts, /readyz answers at once, but the
    controller-manager and the scheduler act again only once their backed-off
    watches resume (up to about a minute on this testbed): until then a
    Deployment gets no pod, and a run that waits for one times out.
    """
    name = f"gpuci-resume-probe-{uuid.uuid4().hex[:8]}"
    labels = {"app.kubernetes.io/name": name}
    cluster.apps.create_namespaced_deployment("default", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "labels": labels},
        "spec": {"replicas": 1, "selector": {"matchLabels": labels}, "template": {
            "metadata": {"labels": labels},
            "spec": {"nodeSelector": {"gpuci.runners/simulated": "true"},
                     "containers": [{"name": "probe", "image": "registry.invalid/resume-probe:never-pulled"}]}}}})
    started = time.monotonic()
    try:
        while True:
            status = cluster.apps.read_namespaced_deployment_status(name, "default").status
            waited = time.monotonic() - started
            if status.available_replicas:
                return
            assert waited < timeout, f"the controller-manager or scheduler did not act within {timeout:.0f}s of the restart"
            time.sleep(1)
    finally:
        cluster.apps.delete_namespaced_deployment(name, "default", propagation_policy="Background")
