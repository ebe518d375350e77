# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The testbed's Prometheus: the real server, started when asked, scraping what the cluster's PodMonitors select.

Real: the Prometheus server and promtool (built from Prometheus's Go module
by build.sh), and its Kubernetes discovery (role pod) against the testbed's
API server. Ours: the translation of the PodMonitors into scrape jobs
(lib/podmonitors.py), which the Prometheus Operator would make; the operator
does not run. The configuration is made again from the cluster's PodMonitors
on `reload` (or `start` of a running one) and handed over by SIGHUP.

It listens on 127.0.0.1:GPUCI_PROMETHEUS_PORT (default 19090), keeps its
files under <state>/prometheus, and is recorded with the other processes,
so `down` and the watchdog stop it by PID.

Helpers for tests: ``Prometheus(url)`` with ``query``, ``rules``,
``targets``, ``wait_target_up`` and ``wait_rules_healthy``.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import yaml

from . import podmonitors, processes
from .api import ApiClient
from .layout import Layout

NAME = "prometheus"
BINARIES = ("prometheus", "promtool")
# Short intervals: a test sees a CI job of ~20 s while it runs, and rules are
# evaluated within seconds. The operator's default is 30 s for both; an
# endpoint's own `interval` still wins.
SCRAPE_INTERVAL = os.environ.get("GPUCI_PROMETHEUS_SCRAPE_INTERVAL", "5s")
EVALUATION_INTERVAL = "5s"
RETENTION = "6h"
# Prometheus's identity towards the API server: a ServiceAccount of its own
# with a ClusterRole that may only get, list and watch pods (what discovery
# of role pod does), and a bound token requested for it. Not the admin token
# (system:masters) nor a component's identity: least privilege, as an
# in-cluster Prometheus has. A ServiceAccount rather than a new user in the
# static token file: that file is read when the API server starts, so a
# testbed that is already up (started before this existed) still gets one.
SA_NAMESPACE, SA_NAME = "kube-system", "gpuci-testbed-prometheus"
TOKEN_SECONDS = 24 * 3600
PODMONITOR_PATH = "/apis/monitoring.coreos.com/v1/podmonitors"


# --- configuration -----------------------------------------------------------------------------

def config(layout: Layout, monitors: list[dict], rule_files: list[Path]) -> tuple[dict, dict[str, list[str]]]:
    """(prometheus.yml as a dict, the monitors left out with their untranslated fields)."""
    sd_extra = {
        "api_server": layout.apiserver_url,
        "authorization": {"credentials_file": str(token_file(layout))},
        "tls_config": {"ca_file": str(layout.pki / "ca.crt")},
    }
    jobs, skipped = podmonitors.scrape_configs(monitors, sd_extra)
    return {
        "global": {"scrape_interval": SCRAPE_INTERVAL, "evaluation_interval": EVALUATION_INTERVAL},
        "rule_files": [str(path) for path in rule_files],
        "scrape_configs": jobs,
    }, skipped


def token_file(layout: Layout) -> Path:
    return layout.prometheus_dir / "token"


def config_file(layout: Layout) -> Path:
    return layout.prometheus_dir / "prometheus.yml"


def rules_dir(layout: Layout) -> Path:
    return layout.prometheus_dir / "rules"


def cluster_monitors(layout: Layout) -> list[dict]:
    """Every PodMonitor in the cluster ([] where the CRD is not installed)."""
    try:
        return ApiClient(layout).get(PODMONITOR_PATH)["items"]
    except urllib.error.HTTPError as err:
        if err.code == 404:
            return []
        raise


def ensure_identity(layout: Layout) -> None:
    """The ServiceAccount, its read-pods ClusterRole and binding (server-side apply), and a fresh token file."""
    api = ApiClient(layout)
    labels = {"app.kubernetes.io/part-of": "gpuci-testbed"}
    objects = [
        ("/api/v1", f"namespaces/{SA_NAMESPACE}/serviceaccounts", {
            "apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": SA_NAME, "namespace": SA_NAMESPACE, "labels": labels}}),
        ("/apis/rbac.authorization.k8s.io/v1", "clusterroles", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": SA_NAME, "labels": labels},
            "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}]}),
        ("/apis/rbac.authorization.k8s.io/v1", "clusterrolebindings", {
            "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": SA_NAME, "labels": labels},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": SA_NAME},
            "subjects": [{"kind": "ServiceAccount", "name": SA_NAME, "namespace": SA_NAMESPACE}]}),
    ]
    for prefix, collection, body in objects:
        api.request("PATCH", f"{prefix}/{collection}/{body['metadata']['name']}?fieldManager=gpuci-testbed&force=true",
                    body, content_type="application/apply-patch+yaml")
    answer = api.request("POST", f"/api/v1/namespaces/{SA_NAMESPACE}/serviceaccounts/{SA_NAME}/token", {
        "apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"expirationSeconds": TOKEN_SECONDS}})
    path = token_file(layout)
    path.write_text(answer["status"]["token"])
    path.chmod(0o600)


def write_config(layout: Layout, rules: list[Path] | None = None) -> tuple[Path, dict[str, list[str]]]:
    """Write prometheus.yml from the cluster's PodMonitors; `rules` (when given) replace the loaded rule files.

    Returns the file and the monitors left out. promtool checks the file (and
    the rule files) before any Prometheus reads it.
    """
    folder = rules_dir(layout)
    folder.mkdir(parents=True, exist_ok=True)
    if rules is not None:
        for old in folder.glob("*.yml"):
            old.unlink()
        for index, path in enumerate(rules):
            shutil.copyfile(path, folder / f"{index:02d}-{Path(path).name.removesuffix('.yml')}.yml")
    document, skipped = config(layout, cluster_monitors(layout), sorted(folder.glob("*.yml")))
    path = config_file(layout)
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    check = check_config(layout, path)
    if check.returncode != 0:
        raise SystemExit(f"testbed: promtool check config {path} failed:\n{check.stdout}{check.stderr}")
    return path, skipped


def job_names(layout: Layout) -> list[str]:
    """The scrape jobs of the configuration written last."""
    return [job["job_name"] for job in yaml.safe_load(config_file(layout).read_text())["scrape_configs"] or []]


def check_config(layout: Layout, path: Path) -> subprocess.CompletedProcess:
    promtool = layout.binaries(BINARIES)["promtool"]
    return subprocess.run([str(promtool), "check", "config", str(path)], capture_output=True, text=True,
                          check=False, timeout=60)


# --- the process ---------------------------------------------------------------------------------

def command(layout: Layout) -> list[str]:
    return [str(layout.binaries(BINARIES)["prometheus"]), f"--config.file={config_file(layout)}",
            f"--storage.tsdb.path={layout.prometheus_dir / 'data'}",
            f"--storage.tsdb.retention.time={RETENTION}",
            f"--web.listen-address=127.0.0.1:{layout.prometheus_port}"]


def start(layout: Layout, rules: list[Path] | None = None, timeout: float = 60) -> "Prometheus":
    """Start the Prometheus (or, when it runs, make its configuration again and reload it); wait until it is ready."""
    if not processes.running(layout):
        raise SystemExit("testbed: not running; start it with testbed.py up")
    if processes.is_running(layout, NAME):
        return reload(layout, rules)
    layout.prometheus_dir.mkdir(parents=True, exist_ok=True)
    ensure_identity(layout)
    _path, skipped = write_config(layout, rules)
    _say_skipped(skipped)
    processes.start(layout, NAME, command(layout))
    client = Prometheus(layout.prometheus_url)
    client.wait_ready(timeout)
    return client


def reload(layout: Layout, rules: list[Path] | None = None, timeout: float = 30) -> "Prometheus":
    """Make the configuration again from the cluster's PodMonitors (and `rules`, when given), SIGHUP, wait for it."""
    client = Prometheus(layout.prometheus_url)
    before = client.reload_time()
    ensure_identity(layout)  # a fresh token: the one from `start` may be near its end
    _path, skipped = write_config(layout, rules)
    _say_skipped(skipped)
    processes.signal_process(layout, NAME, signal.SIGHUP)
    deadline = time.monotonic() + timeout
    while True:
        successful, at = client.reload_state()
        if at > before and successful:
            return client
        if time.monotonic() > deadline:
            raise SystemExit(f"testbed: Prometheus did not reload its configuration within {timeout:.0f}s "
                             f"(see {layout.logs / (NAME + '.log')})")
        time.sleep(0.2)


def stop(layout: Layout) -> bool:
    return processes.stop(layout, NAME)


def _say_skipped(skipped: dict[str, list[str]]) -> None:
    for monitor, fields in skipped.items():
        print(f"testbed: PodMonitor {monitor} is not scraped: lib/podmonitors.py does not translate "
              f"{', '.join(fields)}", flush=True)


# --- the HTTP API, for tests ---------------------------------------------------------------------

class Prometheus:
    """The testbed's Prometheus through its HTTP API (stdlib only)."""

    def __init__(self, url: str):
        self.url = url.rstrip("/")

    def _get(self, path: str, params: dict | None = None, timeout: float = 10):
        query = f"?{urllib.parse.urlencode(params)}" if params else ""
        with urllib.request.urlopen(self.url + path + query, timeout=timeout) as resp:
            return resp.read().decode()

    def api(self, path: str, params: dict | None = None) -> dict:
        """GET /api/v1/<path>: its `data`; fails with Prometheus's error (a bad query says why)."""
        try:
            answer = json.loads(self._get(f"/api/v1/{path}", params))
        except urllib.error.HTTPError as err:
            answer = json.loads(err.read().decode() or "{}")
        if answer.get("status") != "success":
            raise PrometheusError(f"{path} {params or ''}: {answer.get('errorType')}: {answer.get('error')}")
        return answer["data"]

    def ready(self) -> bool:
        try:
            return "Ready" in self._get("/-/ready", timeout=2)
        except OSError:
            return False

    def wait_ready(self, timeout: float = 60) -> None:
        wait_until(f"Prometheus at {self.url} ready", self.ready, timeout)

    def query(self, expr: str, at: float | None = None) -> list[dict]:
        """An instant query: the result's samples as [{"metric": {...}, "value": [time, "text"]}, ...]."""
        data = self.api("query", {"query": expr, **({"time": f"{at:.3f}"} if at is not None else {})})
        return data["result"] if data["resultType"] in ("vector", "matrix") else [{"metric": {}, "value": data["result"]}]

    def targets(self) -> list[dict]:
        """The active targets: scrapePool, labels (after relabelling), health, lastError, discoveredLabels."""
        return self.api("targets", {"state": "active"})["activeTargets"]

    def rule_groups(self) -> list[dict]:
        return self.api("rules")["groups"]

    def wait_target_up(self, labels: dict[str, str], timeout: float = 120) -> dict:
        """The first active target whose labels include `labels`, once its health is `up`; says what it waits for."""
        wanted = ", ".join(f'{k}="{v}"' for k, v in labels.items())

        def probe():
            matching = [t for t in self.targets() if labels.items() <= t["labels"].items()]
            up = [t for t in matching if t["health"] == "up"]
            probe.last = (up or matching or [None])[0]
            return bool(up)
        probe.last = None
        wait_until(f"a target {{{wanted}}} up in Prometheus", probe, timeout,
                   detail=lambda: f"seen: {target_line(probe.last)}" if probe.last else "no such target yet")
        return probe.last

    def wait_rules_healthy(self, timeout: float = 60) -> list[dict]:
        """The rule groups once every rule was evaluated with health ok; fails naming the rules that are not."""
        def unhealthy():
            return [f"{g['name']}/{r.get('name')}: {r.get('health')} {r.get('lastError', '')}".strip()
                    for g in self.rule_groups() for r in g["rules"] if r.get("health") != "ok"]

        def probe():
            probe.left = unhealthy()
            return bool(self.rule_groups()) and not probe.left
        probe.left = []
        wait_until("every rule evaluated with health ok", probe, timeout, detail=lambda: "; ".join(probe.left[:3]))
        return self.rule_groups()

    def reload_state(self) -> tuple[bool, float]:
        """(the last configuration reload succeeded, when the last successful one was), from /metrics."""
        text = self._get("/metrics")
        successful = re.search(r"^prometheus_config_last_reload_successful (\S+)$", text, re.M)
        at = re.search(r"^prometheus_config_last_reload_success_timestamp_seconds (\S+)$", text, re.M)
        return bool(successful and float(successful.group(1)) == 1), float(at.group(1)) if at else 0.0

    def reload_time(self) -> float:
        return self.reload_state()[1]


class PrometheusError(AssertionError):
    """Prometheus answered with an error (a query it refused, say)."""


def target_line(target: dict) -> str:
    labels = ", ".join(f"{k}={v}" for k, v in sorted(target["labels"].items()))
    error = f", last error: {target['lastError']}" if target.get("lastError") else ""
    return f"{target['scrapePool']} {{{labels}}} {target['health']}{error}"


def wait_until(what: str, probe, timeout: float, detail=lambda: "") -> None:
    started = time.monotonic()
    deadline, last_said = started + timeout, 0.0
    while not probe():
        now = time.monotonic()
        if now > deadline:
            raise AssertionError(f"gave up waiting for {what} after {timeout:.0f}s; {detail()}")
        if now - last_said >= 5:
            said = detail()
            print(f"waiting up to {deadline - now:.0f}s more for {what} ({now - started:.0f}s so far"
                  + (f"; {said})" if said else ")"), flush=True)
            last_said = now
        time.sleep(1)


def promql_blocks(markdown: str) -> list[str]:
    """The ```promql fenced blocks of a Markdown page, as written (docs/monitoring.md's example queries)."""
    return re.findall(r"```promql\n(.*?)```", markdown, re.DOTALL)
