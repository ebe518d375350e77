# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Helpers of the gpu_canary tests: record short-lived pods, read the proof report."""
from __future__ import annotations

import json
import re
import threading
from pathlib import Path

from kubernetes import watch
from urllib3.exceptions import ProtocolError

from helpers import REPO_ROOT, Cluster

SCHEMA = REPO_ROOT / "roles" / "gpu_canary" / "files" / "proof-report.schema.json"


class PodRecorder:
    """Remember every pod seen in a namespace while a playbook runs.

    The canary deletes its Jobs (and their pods) before the playbook ends, so
    the test watches the namespace to see the pods the scheduler placed.
    """

    def __init__(self, cluster: Cluster, namespace: str):
        self.cluster, self.namespace = cluster, namespace
        self.pods: dict[str, dict] = {}
        self._watch = watch.Watch()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self):
        # A namespace that does not exist yet lists as empty; the watch sees it fill.
        try:
            for event in self._watch.stream(self.cluster.core.list_namespaced_pod, self.namespace, timeout_seconds=900):
                pod = self.cluster.api_client.sanitize_for_serialization(event["object"])
                name = pod["metadata"]["name"]
                # Keep the latest state that names a node (deletion events carry it too).
                if pod.get("spec", {}).get("nodeName") or name not in self.pods:
                    self.pods[name] = pod
        except ProtocolError:
            pass  # stop() closes the stream under the reader

    def __enter__(self) -> "PodRecorder":
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._watch.stop()
        self._thread.join(timeout=5)

    def by_lane(self) -> dict[str, dict]:
        return {p["metadata"]["labels"]["gpuci.runners/canary-lane"]: p for p in self.pods.values()
                if "gpuci.runners/canary-lane" in p["metadata"].get("labels", {})}


def flat(text: str) -> str:
    """Output with line wrapping undone (the yaml callback folds long messages)."""
    return " ".join(text.split())


def load_report(report_dir: Path) -> dict:
    return json.loads((report_dir / "proof-report.json").read_text())


def schema() -> dict:
    return json.loads(SCHEMA.read_text())


def markdown_table(text: str, header_first_cell: str) -> list[dict[str, str]]:
    """The rows of the Markdown table whose header starts with `| <header_first_cell> |`."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header_first_cell} |"))
    header = _cells(lines[start])
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append(dict(zip(header, _cells(line))))
    return rows


def _cells(line: str) -> list[str]:
    # Cells are split at pipes that are not escaped as \|.
    return [cell.strip().replace("\\|", "|") for cell in re.split(r"(?<!\\)\|", line.strip()[1:-1])]
