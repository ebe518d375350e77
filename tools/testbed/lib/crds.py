# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The Prometheus Operator's CustomResourceDefinitions, installed on the testbed at `up`.

The upstream files (../shared/crds/prometheus-operator-<version>, or
GPUCI_CRDS_DIR), unmodified and never copied into the repository, applied
through the API server (server-side apply, so a second install changes
nothing) and waited for until Established: from then on the API server
validates the PodMonitors and PrometheusRules the roles create against the
operator's own schemas, and Helm sees the monitoring.coreos.com/v1 API the
charts' monitors are gated on. The operator itself does not run; the
testbed's Prometheus reads the PodMonitors instead (lib/podmonitors.py).
"""
from __future__ import annotations

import time
import urllib.error
from pathlib import Path

import yaml

from .api import ApiClient
from .images import pinned
from .layout import Layout, crds_dir

FIELD_MANAGER = "gpuci-testbed"
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def prometheus_operator_dir() -> Path:
    return crds_dir() / f"prometheus-operator-{pinned('PROMETHEUS_OPERATOR_VERSION')}"


def definitions(folder: Path | None = None) -> list[dict]:
    """Every CustomResourceDefinition in the folder's YAML files; fails naming the folder when there is none."""
    folder = folder or prometheus_operator_dir()
    found = []
    for path in sorted(folder.glob("*.yaml")) if folder.is_dir() else []:
        found += [doc for doc in yaml.safe_load_all(path.read_text())
                  if doc and doc.get("kind") == "CustomResourceDefinition"]
    if not found:
        raise SystemExit(f"testbed: no CustomResourceDefinition in {folder} (the upstream CRDs; set GPUCI_CRDS_DIR)")
    return found


def established(crd: dict) -> bool:
    return any(c.get("type") == "Established" and c.get("status") == "True"
               for c in (crd.get("status") or {}).get("conditions") or [])


def install(layout: Layout, folder: Path | None = None, timeout: float = 60) -> list[str]:
    """Apply every CRD of the folder and wait until each is Established; return their names."""
    api = ApiClient(layout)
    names = []
    for crd in definitions(folder):
        name = crd["metadata"]["name"]
        # JSON is YAML: the apply body needs no YAML serialiser.
        api.request("PATCH", f"{CRD_PATH}/{name}?fieldManager={FIELD_MANAGER}&force=true", crd,
                    content_type="application/apply-patch+yaml", timeout=30)
        names.append(name)
    deadline = time.monotonic() + timeout
    waiting = list(names)
    while waiting:
        waiting = [name for name in waiting if not _established(api, name)]
        if waiting and time.monotonic() > deadline:
            raise SystemExit(f"testbed: CRDs not Established after {timeout:.0f}s: {', '.join(waiting)}")
        if waiting:
            time.sleep(0.2)
    return names


def _established(api: ApiClient, name: str) -> bool:
    try:
        return established(api.get(f"{CRD_PATH}/{name}"))
    except urllib.error.HTTPError as err:
        if err.code == 404:
            return False
        raise
