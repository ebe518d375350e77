# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The runner pools' metrics and PodMonitors, and a real Prometheus scraping them, on one converged fleet.

Real: the GitLab Runner managers on the testbed's real node (metrics server on
port 9252), the chart's PodMonitors validated by the API server against the
Prometheus Operator's CRD, the Prometheus server and its Kubernetes discovery
against the testbed's API server, the collection's alert rules loaded into it.
Ours, not the operator's: the PodMonitor's translation into a scrape job
(tools/testbed/lib/podmonitors.py; the operator does not run on the testbed).

One converge of a fleet of its own, shared by every test here (the monitor
tests and the scrape tests once converged a fleet each): a GPU pool and a
CPU pool whose jobs land on simulated nodes, and a pool whose jobs run on
the real node, with metrics on, PodMonitors `auto` (the CRDs are installed,
so on) and the user's selection label. Each pool's release serves its
manager's metrics and makes the chart's PodMonitor, relabelled to the alert
rules' SCRAPE_LABELS and labelled for the user's Prometheus to select; a
rerun changes nothing. One job of the real pool runs through the real
runner for longer than a scrape interval, and Prometheus must have seen it
running under the labels the alert rules read (job, pool). Then the alert
rules for an inventory with these pools load and evaluate healthy, every
query of docs/monitoring.md evaluates without error, and `state: absent`
leaves no PodMonitor. `gitlab_runner_pod_monitors: on` on a cluster without
the CRD is refused before any change: the testbed keeps its CRD, so that
path is unit-tested (tests/unit/plugins/action/test_fleet_decide.py).
"""
from __future__ import annotations

import time
import uuid

import pytest
import yaml

from helpers import REPO_ROOT
from lib import crds, processes, prometheus
from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.alert_rules import SCRAPE_LABELS
from lib.images import BASE_IMAGE, GITLAB_RUNNER_HELPER_IMAGE
from lib.layout import Layout
from lib.node import REAL_NODE_LABEL, REAL_NODE_TAINT

from gitlab_runner_support import StandInJobs, trace_text

PLAYBOOK = "gitlab_runner.yml"
FLEET = "prometheus-scrape-tests"
MANAGER_NS = "gitlab-runner-prom-test"
JOBS_NS = "gitlab-runner-prom-test-jobs"
POOL = "prom-real"
RELEASE = f"gitlab-runner-{POOL}"
RUN_ID = uuid.uuid4().hex[:12]
# Tags no other test's runner carries all of: the stand-in routes this job to this pool alone.
TAGS = ["real-node", "prometheus-scrape"]
# The labels the alert rules read (SCRAPE_LABELS in module_utils/monitoring/alert_rules.py).
TARGET = {"job": "gpuci-gitlab-runner", "pool": POOL}


SELECTION = {"release": "kube-prometheus-stack"}
MONITORING = "monitoring.coreos.com/v1"
FLEET_SELECTOR = f"app.kubernetes.io/part-of=gpuci-runners,gpuci.runners/fleet={FLEET}"
# Their jobs land on simulated nodes; their managers run on the real node as every manager does.
MONITORED_ONLY = [
    {"name": "mon-l40s", "gpu_class": "l40s", "gpus": 1, "namespace": JOBS_NS, "token": f"glrt-gpuci-mon-l40s-{RUN_ID}"},
    {"name": "mon-cpu", "namespace": JOBS_NS, "token": f"glrt-gpuci-mon-cpu-{RUN_ID}"},
]


def pools() -> list[dict]:
    return [*MONITORED_ONLY,
            {"name": POOL, "namespace": JOBS_NS, "cpu_request": "100m", "memory_request": "64Mi", "tags": TAGS,
             "image": BASE_IMAGE, "helper_image": GITLAB_RUNNER_HELPER_IMAGE,
             "node_selector": {REAL_NODE_LABEL: "true"},
             "tolerations": [dict(REAL_NODE_TAINT, operator="Equal")],
             "token": f"glrt-gpuci-prom-{RUN_ID}"}]


def fleet_vars(pool_list: list[dict], **extra) -> dict:
    return {"gitlab_runner_fleet": FLEET, "gitlab_runner_namespace": MANAGER_NS, "gitlab_runner_pools": pool_list,
            "gitlab_runner_metrics": True, "gitlab_runner_pod_monitors": "auto",
            "gitlab_runner_pod_monitor_labels": SELECTION, **extra}


def pod_monitors(cluster) -> dict[str, dict]:
    return {monitor["metadata"]["name"]: monitor
            for monitor in cluster.list(MONITORING, "PodMonitor", namespace=MANAGER_NS)}


def leftovers(cluster) -> list[str]:
    return [o["metadata"]["name"] for o in cluster.list("v1", "Namespace", label_selector=FLEET_SELECTOR)]


@pytest.fixture(scope="module")
def layout() -> Layout:
    return Layout.from_environment()


@pytest.fixture(scope="module")
def scraped_pool(testbed, playbooks, real_components, layout):
    """The fleet converged with its PodMonitors (nothing of it before), the testbed's Prometheus scraping it;
    removed after."""
    real_components.require("gitlab-runner")
    # A testbed started before `up` installed them gets the CRDs here (server-side apply: no change otherwise).
    crds.install(layout)
    teardown = fleet_vars([], gitlab_runner_state="absent")
    if leftovers(testbed):
        playbooks.run(PLAYBOOK, extra_vars=teardown).assert_ok()
    playbooks.run(PLAYBOOK, extra_vars=fleet_vars(pools())).assert_ok()
    try:
        yield testbed
    finally:
        if leftovers(testbed):
            playbooks.run(PLAYBOOK, extra_vars=teardown)
        if processes.is_running(layout, prometheus.NAME):
            prometheus.reload(layout)  # the pool's job leaves the configuration with its PodMonitor


@pytest.fixture(scope="module")
def prom(scraped_pool, layout):
    """The testbed's Prometheus, started (or reloaded) with the jobs of the cluster's PodMonitors, this pool's up;
    stopped after if it was started here."""
    started_here = not processes.is_running(layout, prometheus.NAME)
    started = time.monotonic()
    client = prometheus.start(layout)
    print(f"Prometheus ready at {client.url} in {time.monotonic() - started:.1f}s, scrape jobs: "
          f"{prometheus.job_names(layout)}", flush=True)
    client.wait_target_up(TARGET, timeout=120)
    yield client
    if started_here:
        prometheus.stop(layout)


@pytest.mark.real_runner
def test_the_role_made_the_pools_podmonitor_and_the_api_server_accepted_it(scraped_pool):
    assert sorted(pod_monitors(scraped_pool)) == sorted(f"gitlab-runner-{p['name']}" for p in pools()), \
        "gitlab_runner_pod_monitors: auto should make the chart's PodMonitor where the CRD exists"


@pytest.mark.real_runner
def test_each_pool_gets_a_pod_monitor_relabelled_to_the_scrape_labels(scraped_pool):
    monitors = pod_monitors(scraped_pool)
    for pool in pools():
        monitor = monitors["gitlab-runner-" + pool["name"]]
        labels = monitor["metadata"]["labels"]
        assert labels["release"] == SELECTION["release"], "the user's selection label wins over the chart's"
        assert labels["gpuci.runners/pool"] == pool["name"]
        (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
        assert endpoint["port"] == "metrics"
        targets = {entry["targetLabel"]: entry for entry in endpoint["relabelings"]}
        # A pool without a GPU class has the gpu_class relabelling too: its source label is missing, so the target
        # gets none (test_prometheus_scrapes_the_pools_manager_with_the_rules_labels).
        assert set(targets) == {"job", SCRAPE_LABELS["pool"], SCRAPE_LABELS["gpu_class"]}, pool["name"]
        assert targets["job"]["replacement"] == SCRAPE_LABELS["job"]
        assert targets["pool"]["sourceLabels"] == ["__meta_kubernetes_pod_label_gpuci_runners_pool"]
        assert targets["gpu_class"]["sourceLabels"] == ["__meta_kubernetes_pod_label_gpuci_runners_gpu_class"]
    # The labels the relabelings read are on the managers' pods, and the metrics port is open.
    deployment = scraped_pool.get("apps/v1", "Deployment", "gitlab-runner-mon-l40s", MANAGER_NS)
    template = deployment["spec"]["template"]
    assert template["metadata"]["labels"]["gpuci.runners/gpu-class"] == "l40s"
    assert template["metadata"]["labels"]["gpuci.runners/pool"] == "mon-l40s"
    ports = [port for container in template["spec"]["containers"] for port in container.get("ports") or []]
    assert {"name": "metrics", "containerPort": 9252} in [
        {"name": port.get("name"), "containerPort": port["containerPort"]} for port in ports]


@pytest.mark.real_runner
def test_rerun_changes_nothing(scraped_pool, playbooks):
    run = playbooks.run(PLAYBOOK, extra_vars=fleet_vars(pools())).assert_ok()
    assert run.changed == 0, run.output[-4000:]


@pytest.mark.real_runner
def test_prometheus_scrapes_the_pools_manager_with_the_rules_labels(prom, layout):
    target = prom.wait_target_up(TARGET, timeout=30)
    labels = target["labels"]
    assert target["scrapePool"] == f"podMonitor/{MANAGER_NS}/{RELEASE}/0"
    assert labels["namespace"] == MANAGER_NS and labels["endpoint"] == "metrics"
    assert labels["pod"].startswith(RELEASE)
    assert "gpu_class" not in labels, "a pool without a GPU class gets no gpu_class label"
    assert target["discoveredLabels"].get("__meta_kubernetes_pod_container_port_number") == "9252"
    concurrent = prom.query(f'gitlab_runner_concurrent{{job="{TARGET["job"]}",pool="{POOL}"}}')
    assert concurrent, "the manager's own metrics should carry the pool's labels"


def scrape_interval_s(layout: Layout) -> float:
    """The pool's scrape interval as configured (its endpoint's, else the global one), in seconds."""
    document = yaml.safe_load(prometheus.config_file(layout).read_text())
    job = next(j for j in document["scrape_configs"] if j["job_name"] == f"podMonitor/{MANAGER_NS}/{RELEASE}/0")
    text = job.get("scrape_interval", document["global"]["scrape_interval"])
    units = {"ms": 0.001, "s": 1, "m": 60}
    unit = next(u for u in units if text.endswith(u))
    return float(text[:-len(unit)]) * units[unit]


@pytest.mark.real_runner
def test_prometheus_saw_the_pools_job_running(prom, layout):
    """While the pool's job is held running, Prometheus's scrapes of its manager count it (a bound, not a timing)."""
    standin = StandInJobs(Layout.from_environment().gitlab_standin_url)
    standin.register_runners(pools())
    mark = f"prom-job-{RUN_ID}"
    queued_at = time.time()
    with standin.held_job(TAGS, mark, GITLAB_RUNNER_HELPER_IMAGE, "prometheus-scrape") as job_id:
        seen = running_jobs_seen(standin, job_id, mark, prom, queued_at, bound_s=150 + 4 * scrape_interval_s(layout))
    job = standin.wait_finished(job_id, 120)
    assert job["state"] == "success", trace_text(job["trace"])[-3000:]
    assert seen >= 1, f"Prometheus never counted the held job running (max {seen})"


def running_jobs_seen(standin: StandInJobs, job_id: int, mark: str, prom, since: float, bound_s: float) -> float:
    """The most running jobs Prometheus recorded for the pool since `since`, polled while the job runs
    until it is at least 1 or `bound_s` has passed."""
    deadline = time.monotonic() + bound_s
    seen = 0.0
    while time.monotonic() < deadline:
        if f"{mark}-starts" in trace_text(standin.job(job_id)["trace"]):
            expr = (f'max_over_time(gitlab_runner_jobs{{job="{TARGET["job"]}",pool="{POOL}",state="running"}}'
                    f'[{int(time.time() - since) + 5}s])')
            result = prom.query(expr)
            seen = float(result[0]["value"][1]) if result else 0.0
            if seen >= 1:
                return seen
        print(f"waiting up to {deadline - time.monotonic():.0f} s for Prometheus to count the held job {job_id} "
              f"running (seen {seen:.0f})", flush=True)
        time.sleep(3)
    return seen


@pytest.fixture(scope="module")
def rules_file(scraped_pool, playbooks, tmp_path_factory):
    """The collection's alert rules for an inventory with this pool, as playbooks/alert_rules.yml writes them."""
    folder = tmp_path_factory.mktemp("alert-rules")
    playbooks.run("alert_rules.yml", extra_vars=fleet_vars(pools(), gpuci_alert_rules_dir=str(folder))).assert_ok()
    path = folder / "testbed.rules.yml"
    assert POOL in path.read_text(), "the rules should name the pool"
    return path


@pytest.mark.real_runner
def test_the_collections_alert_rules_load_and_evaluate_healthy(prom, layout, rules_file):
    prometheus.reload(layout, rules=[rules_file])
    expected = {group["name"] for group in yaml.safe_load(rules_file.read_text())["groups"]}
    groups = prom.wait_rules_healthy(timeout=60)
    assert {group["name"] for group in groups} == expected
    assert all(rule["health"] == "ok" for group in groups for rule in group["rules"])


@pytest.mark.real_runner
def test_every_query_of_the_monitoring_page_evaluates(prom):
    queries = prometheus.promql_blocks((REPO_ROOT / "docs" / "monitoring.md").read_text())
    assert len(queries) >= 3
    for query in queries:
        prom.query(query)  # raises PrometheusError with Prometheus's reason for a query it refuses


@pytest.mark.real_runner
def test_state_absent_removes_the_pod_monitors(scraped_pool, playbooks, prom):
    """Last: it takes the fleet away (`prom` first, so Prometheus's module fixture outlives it)."""
    playbooks.run(PLAYBOOK, extra_vars=fleet_vars(pools(), gitlab_runner_state="absent")).assert_ok()
    assert pod_monitors(scraped_pool) == {}
    assert leftovers(scraped_pool) == []
