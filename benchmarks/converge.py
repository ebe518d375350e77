# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Converge benchmarks on the local testbed (`make bench`; not a test, no pass/fail).

(a) site.yml on the reference inventory (benchmarks/inventory: GPU Operator,
    3 GitLab pools, ARC controller, 3 scale sets) against bare_helm.sh doing
    the same releases with the same values, measured in one run -> ratio of
    the medians of ROUNDS rounds;
(b) a no-op rerun of site.yml after each round's converge, the median as a
    ratio to (a)'s;
(c) gitlab_runner.yml with 1, 10, 50 and 100 pools, to show how cost grows;
(d) site.yml on three clusters at once (forks), as a ratio to one cluster:
    two private testbed instances (own ports and state, simulated nodes only)
    join the main testbed.

Targets (issue 17), each printed as met or NOT met: (a) <= 1.0 x bare helm,
(b) <= 0.2 x converge, (c) <= 1.5 s per added pool at every step (linear),
(d) <= 1.3 x one cluster.

Order: the machine's pace first (Ansible's parse of site.yml, in the
result's machine), then a warm-up converge records what the roles install (release values,
the objects they make themselves) and is torn down; then ROUNDS rounds of
bare helm, the timed converge and its rerun, each from the same clean state
(CRDs, which Helm keeps, exist for both), so that a slow moment of the
machine moves one round, not the ratio. The two extra clusters of (d) get
their own warm-up and teardown before the three are timed, so all start
alike; the machine's busy CPU seconds of (a)'s median round and of (d) give
(d)'s floor on this machine.
Each step prints a progress line as it starts and ends. Prints a table,
writes the result to benchmarks/results/<date>-<host>-<cpus>cpu.json (and
latest.json), and its figures into docs/reliability.md
(benchmarks/figures.py, which also judges each target; --no-documents
leaves it). GPUCI_TESTBED_STATE and the testbed's port variables select
a private testbed instance, as for the tests (tools/testbed/lib/layout.py).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from figures import TARGETS, marginal_costs, noop_verdict, verdict, write_documents

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "testbed"))
from lib.layout import Layout, ansible_playbook  # noqa: E402  (the testbed's own: its kubeconfig, chart repository)

BENCH = ROOT / "benchmarks"
INVENTORY = BENCH / "inventory"
RESULTS = BENCH / "results"
TESTBED = [sys.executable, str(ROOT / "tools" / "testbed" / "testbed.py")]
LAYOUT = Layout.from_environment()
KUBECONFIG = LAYOUT.kubeconfig
CHART_REPO = os.environ.get("GPUCI_CHART_REPO_URL") or LAYOUT.chart_repo_url
NAMESPACES = ("bench-gpu-operator", "bench-gitlab-runner", "bench-arc-systems", "bench-arc-runners")
OWN_KINDS = ("namespaces", "secrets", "serviceaccounts", "roles", "rolebindings", "configmaps")
POOL_COUNTS = (1, 10, 50, 100)
# A no-op rerun takes 1.5 s and can be 0.2 s off on this machine, a converge
# 8 s and 1 s off: (a) and (b) take the median of three rounds (bare helm,
# converge, no-op), each kept in the results.
ROUNDS = 3
# Private testbed instances for (d): (state folder name, apiserver, etcd, chart repository port).
EXTRA_CLUSTERS = (("bench-cluster-2", 26543, 22479, 28979), ("bench-cluster-3", 26643, 22579, 29079))
STARTED = time.monotonic()


def progress(message: str) -> None:
    print(f"[bench {time.monotonic() - STARTED:5.0f}s] {message}", flush=True)


def tool_env() -> dict[str, str]:
    """PATH with the testbed's helm and kubectl first, the testbed's kubeconfig, plain output."""
    paths = subprocess.run(["bash", str(ROOT / "tools/testbed/build.sh"), "--print-paths"],
                           check=True, capture_output=True, text=True).stdout.strip()
    return dict(os.environ, PATH=f"{ROOT / '.venv/bin'}:{paths}:{os.environ['PATH']}", KUBECONFIG=str(KUBECONFIG),
                GPUCI_KUBECONFIG=str(KUBECONFIG), ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"), ANSIBLE_NOCOLOR="1")


ENV: dict[str, str] = {}


def sh(*argv: str, check: bool = True) -> str:
    proc = subprocess.run(argv, cwd=ROOT, env=ENV, capture_output=True, text=True, check=False)
    if check and proc.returncode:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout


def busy_cpu_seconds() -> float:
    """CPU seconds the whole machine has spent busy since boot (/proc/stat: all but idle and iowait).

    The testbed's API servers run on this machine too, so only the machine's
    total says how much of a step's wall time its CPU work fills.
    """
    fields = [int(n) for n in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    return (sum(fields) - fields[3] - fields[4]) / os.sysconf("SC_CLK_TCK")


def run_cpu_seconds() -> float:
    """CPU seconds of this script's finished children and their own: ansible-playbook, its workers and modules, helm.

    What (d) costs the machine that runs Ansible; busy_cpu_seconds() less this
    is the testbed's API servers, which a user's clusters would not put on it.
    """
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def with_cpu(step):
    """``step()``'s result, then the machine's busy CPU seconds and the run's own CPU seconds it took."""
    busy, own = busy_cpu_seconds(), run_cpu_seconds()
    result = step()
    return result, busy_cpu_seconds() - busy, run_cpu_seconds() - own


def pace(rounds: int = 3) -> float:
    """The machine's pace at Ansible's own CPU work: seconds to parse site.yml (``--list-tasks``), median of ``rounds``.

    The VMs of one kind differ: on one, every CPU-bound step took twice as
    long as on another, while helm's waits took as long. The ratios of
    (a), (b) and (d) move with that, so each result says how fast its
    machine was at the work the collection adds to helm's.
    """
    argv = [str(ansible_playbook()), "-i", str(INVENTORY), str(ROOT / "playbooks" / "site.yml"), "--list-tasks"]
    times = []
    for _round in range(rounds):
        started = time.monotonic()
        subprocess.run(argv, cwd=ROOT, env=ENV, capture_output=True, check=True)
        times.append(time.monotonic() - started)
    return round(statistics.median(times), 2)


def playbook(name: str, extra_vars: dict | None = None, profile: bool = False,
             inventory: Path = INVENTORY, limit: str | None = None) -> tuple[float, str]:
    """Run playbooks/<name> on the reference inventory (or another, or some of its hosts); (seconds, output).

    Fails loudly.
    """
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(extra_vars or {}, handle)
    argv = [str(ansible_playbook()), "-i", str(inventory), str(ROOT / "playbooks" / name),
            "-e", f"@{handle.name}"] + (["--limit", limit] if limit else [])
    if name == "site.yml":
        wait_for_sole_gpu_operator()
    env = dict(ENV, ANSIBLE_CALLBACKS_ENABLED="ansible.posix.profile_tasks") if profile else ENV
    what = (f"{name} with {json.dumps(extra_vars)[:60]}" if extra_vars else name) + (f" on {limit}" if limit else "")
    progress(f"running {what}")
    started = time.monotonic()
    proc = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
    elapsed = time.monotonic() - started
    progress(f"  {name} took {elapsed:.1f}s")
    os.unlink(handle.name)
    if proc.returncode:
        raise RuntimeError(f"{name} failed ({proc.returncode}):\n{proc.stdout[-5000:]}{proc.stderr[-2000:]}")
    return elapsed, proc.stdout


def changed(output: str) -> int:
    return sum(int(n) for n in re.findall(r"\bchanged=(\d+)", output))


def slowest_tasks(output: str, count: int = 8) -> list[dict]:
    """profile_tasks' closing table: the slowest task names and their seconds."""
    rows = re.findall(r"^(.+?) -+ (\d+\.\d+)s$", output, flags=re.MULTILINE)
    return [{"task": name.strip(), "seconds": float(sec)} for name, sec in rows[:count]]


def wait_for_sole_gpu_operator(timeout: float = 1800) -> None:
    """The chart's ClusterRole has a fixed name: wait while another GPU Operator release exists.

    On a shared testbed other suites install the operator now and then; a
    converge started meanwhile would fail on the ClusterRole's ownership.
    """
    deadline = time.monotonic() + timeout
    while True:
        # Any release that may hold the ClusterRole, in flags helm 3 and helm 4 both take (helm 4 has no -a).
        others = [r for r in json.loads(sh("helm", "list", "-A", "--deployed", "--failed", "--pending", "--uninstalling",
                                           "-o", "json"))
                  if r["chart"].startswith("gpu-operator-") and r["namespace"] not in NAMESPACES]
        if not others or time.monotonic() > deadline:
            return
        print(f"waiting for other GPU Operator releases to go: {[r['name'] for r in others]}", flush=True)
        time.sleep(15)


def teardown(inventory: Path = INVENTORY) -> float:
    return playbook("teardown.yml", inventory=inventory)[0]


def record_plan(plan: Path) -> int:
    """What the converge installed: objects the roles made themselves, and each release's chart and values."""
    (plan / "values").mkdir(parents=True, exist_ok=True)
    documents = []
    for kind in OWN_KINDS:
        listing = json.loads(sh("kubectl", "get", kind, "-A", "-l", "app.kubernetes.io/part-of=gpuci-runners",
                                "-o", "json"))
        for item in listing["items"]:
            meta = item["metadata"]
            if meta.get("namespace", meta["name"]) not in NAMESPACES or meta.get("labels", {}).get(
                    "app.kubernetes.io/managed-by") == "Helm":
                continue
            keep = {k: v for k, v in item.items() if k not in ("metadata", "status")}
            keep["metadata"] = {k: meta[k] for k in ("name", "namespace", "labels", "annotations") if k in meta}
            documents.append(keep)
    documents.sort(key=lambda d: d["kind"] != "Namespace")
    (plan / "objects.yaml").write_text(yaml.safe_dump_all(documents, sort_keys=False))
    releases = [r for r in json.loads(sh("helm", "list", "-A", "-o", "json")) if r["namespace"] in NAMESPACES]
    releases.sort(key=lambda r: r["updated"])
    lines = []
    for release in releases:
        chart, version = release["chart"].rsplit("-", 1)
        values = sh("helm", "get", "values", release["name"], "-n", release["namespace"], "-o", "json")
        (plan / "values" / f"{release['namespace']}.{release['name']}.json").write_text(values)
        lines.append(f"{release['name']} {release['namespace']} {chart} {version} 5m")
    (plan / "releases.tsv").write_text("\n".join(lines) + "\n")
    return len(lines)


def pool_vars(count: int) -> dict:
    """`count` GitLab pools, GPU and CPU pools alternating."""
    pools = []
    for index in range(1, count + 1):
        pool = {"name": f"p{index:02d}", "token": f"glrt-bench-pool-{index:02d}"}
        if index % 2:
            pool.update(gpu_class="l40s", gpus=1)
        pools.append(pool)
    return {"gitlab_runner_pools": pools}


def machine() -> dict:
    cpuinfo = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    model = re.search(r"model name\s*:\s*(.+)", cpuinfo)
    memory = re.search(r"MemTotal:\s*(\d+)", Path("/proc/meminfo").read_text()) if Path("/proc/meminfo").exists() else None
    return {"host": platform.node(), "cpu": model.group(1) if model else platform.processor(),
            "cpus": os.cpu_count(), "memory_gib": round(int(memory.group(1)) / 2**20, 1) if memory else None,
            "python": platform.python_version(), "kernel": platform.release()}


def ensure_testbed() -> bool:
    """Start the testbed unless it runs; True when this script started it."""
    if subprocess.run(TESTBED + ["status"], capture_output=True, check=False).returncode == 0:
        return False
    subprocess.run(TESTBED + ["up", "--ttl", "7200"], check=True)
    return True


def extra_cluster_env(state: Path, apiserver: int, etcd: int, chart_repo: int) -> dict[str, str]:
    return dict(ENV, GPUCI_TESTBED_STATE=str(state), GPUCI_TESTBED_APISERVER_PORT=str(apiserver),
                GPUCI_TESTBED_ETCD_PORT=str(etcd), GPUCI_CHART_REPO_PORT=str(chart_repo),
                GPUCI_TESTBED_REAL_NODE="0")  # the real node is one per machine


def three_clusters(folder: Path) -> Path:
    """Start the extra testbeds; an inventory of the main testbed and them, with the reference group_vars."""
    inventory = folder / "inventory"
    shutil.copytree(INVENTORY, inventory)
    hosts = {"testbed": {"ansible_connection": "local", "ansible_python_interpreter": "{{ ansible_playbook_python }}"}}
    for name, apiserver, etcd, chart_repo in EXTRA_CLUSTERS:
        state = folder / name
        progress(f"starting private testbed {name} (API server port {apiserver}, simulated nodes only)")
        subprocess.run(TESTBED + ["up", "--ttl", "3600"], env=extra_cluster_env(state, apiserver, etcd, chart_repo),
                       check=True, stdout=subprocess.DEVNULL)
        hosts[name] = dict(hosts["testbed"], gpuci_kubeconfig=str(state / "kubeconfig"))
    hosts["testbed"]["gpuci_kubeconfig"] = str(KUBECONFIG)
    document = {"all": {"children": {"gpuci_clusters": {"hosts": hosts}, "gpu_hosts": {"hosts": {}}}}}
    (inventory / "hosts.yml").write_text(yaml.safe_dump(document, sort_keys=False))
    return inventory


def stop_extra_clusters(folder: Path) -> None:
    for name, apiserver, etcd, chart_repo in EXTRA_CLUSTERS:
        subprocess.run(TESTBED + ["down"], env=extra_cluster_env(folder / name, apiserver, etcd, chart_repo),
                       check=False, stdout=subprocess.DEVNULL)


def reference_round(plan: Path) -> dict:
    """One round of (a) and (b) on the reference inventory: bare helm, then site.yml's converge and a no-op rerun.

    Each starts from the same clean state and leaves it clean again.
    """
    wait_for_sole_gpu_operator()
    progress("running bare_helm.sh: the same releases by helm upgrade --install --wait")
    started = time.monotonic()
    sh("bash", str(BENCH / "bare_helm.sh"), str(plan), CHART_REPO)
    bare = time.monotonic() - started
    progress(f"  bare helm took {bare:.1f}s")
    teardown()
    (converge, converge_out), converge_cpu, converge_run_cpu = with_cpu(lambda: playbook("site.yml", profile=True))
    noop, noop_out = playbook("site.yml")
    return {"bare_s": bare, "converge_s": converge, "converge_cpu_s": converge_cpu,
            "converge_run_cpu_s": converge_run_cpu, "noop_s": noop,
            "noop_changed": changed(noop_out), "teardown_s": teardown(), "slowest_tasks": slowest_tasks(converge_out)}


def commit() -> str:
    """The commit measured, marked when the working tree differs from it (the results folder aside)."""
    head = sh("git", "rev-parse", "--short", "HEAD").strip()
    changed = sh("git", "status", "--porcelain", "--", ".", ":!benchmarks/results").strip()
    return head + (" with uncommitted changes" if changed else "")


def run(pool_counts: tuple[int, ...]) -> dict:
    progress("measuring the machine's pace: ansible-playbook site.yml --list-tasks, 3 times")
    result: dict = {"date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                    "machine": dict(machine(), parse_site_yml_s=pace()),
                    "load": " ".join(Path("/proc/loadavg").read_text().split()[:3]), "commit": commit(),
                    # helm 3 and helm 4 differ in speed (docs/reliability.md): say which one ran.
                    "helm": sh("helm", "version", "--short").strip()}
    teardown()  # leftovers of an interrupted run
    rounds = []
    with tempfile.TemporaryDirectory() as folder:
        plan = Path(folder)
        warmup, _output = playbook("site.yml")
        result["releases"] = record_plan(plan)
        teardown()
        for number in range(1, ROUNDS + 1):
            progress(f"round {number} of {ROUNDS} of (a) and (b): bare helm, then converge and no-op, each from clean")
            rounds.append(reference_round(plan))
    # The round whose converge is the median one gives the CPU seconds and the slowest tasks.
    middle = sorted(rounds, key=lambda r: r["converge_s"])[len(rounds) // 2]
    bare, converge, noop = (statistics.median(r[key] for r in rounds) for key in ("bare_s", "converge_s", "noop_s"))
    converge_cpu, converge_run_cpu = middle["converge_cpu_s"], middle["converge_run_cpu_s"]
    result["reference"] = {
        "bare_helm_s": round(bare, 2), "converge_s": round(converge, 2), "noop_s": round(noop, 2),
        "bare_helm_runs_s": [round(r["bare_s"], 2) for r in rounds],
        "converge_runs_s": [round(r["converge_s"], 2) for r in rounds],
        "noop_runs_s": [round(r["noop_s"], 2) for r in rounds],
        "warmup_converge_s": round(warmup, 1),
        "teardown_s": round(statistics.median(r["teardown_s"] for r in rounds), 1),
        "converge_to_bare_ratio": round(converge / bare, 3), "noop_to_converge_ratio": round(noop / converge, 3),
        "noop_changed": sum(r["noop_changed"] for r in rounds), "slowest_tasks": middle["slowest_tasks"],
    }
    with tempfile.TemporaryDirectory(prefix="gpuci-bench-clusters-") as folder:
        try:
            inventory = three_clusters(Path(folder))
            # Like the main testbed before (a), the new clusters get a
            # warm-up converge and its teardown: each of the three then
            # starts from the same state, the CRDs (which Helm keeps) in place.
            extra = ",".join(name for name, *_ports in EXTRA_CLUSTERS)
            playbook("site.yml", inventory=inventory, limit=extra)
            teardown(inventory)
            (three, _output), three_cpu, three_run_cpu = with_cpu(lambda: playbook("site.yml", inventory=inventory))
            teardown(inventory)
        finally:
            stop_extra_clusters(Path(folder))
    # No schedule of the three converges can end before the machine has done
    # their CPU work on all its cores: that floor, as a ratio to one cluster,
    # says whether (d) is bound by this machine rather than by the run. The
    # run's own share (Ansible and helm) gives the floor a machine would have
    # whose clusters ran elsewhere, as users' clusters do.
    cpu_floor = three_cpu / (os.cpu_count() or 1)
    run_cpu_floor = three_run_cpu / (os.cpu_count() or 1)
    result["clusters"] = {"one_cluster_s": round(converge, 2), "three_clusters_s": round(three, 2),
                          "three_to_one_ratio": round(three / converge, 3),
                          "one_cluster_cpu_s": round(converge_cpu, 1), "three_clusters_cpu_s": round(three_cpu, 1),
                          "cpu_floor_s": round(cpu_floor, 1), "cpu_floor_ratio": round(cpu_floor / converge, 2),
                          "one_cluster_run_cpu_s": round(converge_run_cpu, 1),
                          "three_clusters_run_cpu_s": round(three_run_cpu, 1),
                          "run_cpu_floor_s": round(run_cpu_floor, 1),
                          "run_cpu_floor_ratio": round(run_cpu_floor / converge, 2)}
    result["pools"] = []
    for count in pool_counts:
        seconds, out = playbook("gitlab_runner.yml", pool_vars(count), profile=True)
        noop_seconds, _output = playbook("gitlab_runner.yml", pool_vars(count))
        removal, _output = playbook("gitlab_runner.yml", {**pool_vars(count), "gitlab_runner_state": "absent"})
        result["pools"].append({"pools": count, "converge_s": round(seconds, 1), "noop_s": round(noop_seconds, 1),
                                "absent_s": round(removal, 1), "per_pool_s": round(seconds / count, 2),
                                "slowest_tasks": slowest_tasks(out, 5)})
    result["seconds_per_added_pool"] = marginal_costs(result["pools"])
    return result


def table(result: dict) -> str:
    ref, clusters = result["reference"], result["clusters"]
    machine_ = result["machine"]
    rows = [
        f"gpuci.runners converge benchmark, {result['date']}, {machine_['host']} "
        f"({machine_['cpu']}, {machine_['cpus']} CPUs, {machine_['memory_gib']} GiB, load {result['load']}), "
        f"helm {result.get('helm', 'not recorded')}",
        "",
        f"(a) and (b): medians of {len(ref.get('converge_runs_s', [0]))} rounds, each bare helm, converge, no-op",
        "",
        f"{'measure':46} {'seconds':>8} {'ratio':>6}  target           verdict",
        f"{'(a) bare helm upgrade --install, ' + str(result['releases']) + ' releases':46} {ref['bare_helm_s']:8.1f}",
        f"{'(a) site.yml converge, same releases':46} {ref['converge_s']:8.1f} {ref['converge_to_bare_ratio']:6.2f}"
        f"  <= {TARGETS['converge_to_bare']} x bare     {verdict(ref['converge_to_bare_ratio'], TARGETS['converge_to_bare'])}",
        f"{'(b) site.yml no-op (changed=' + str(ref['noop_changed']) + ')':46} {ref['noop_s']:8.1f} "
        f"{ref['noop_to_converge_ratio']:6.2f}  <= {TARGETS['noop_to_converge']} x converge "
        f"{noop_verdict(ref)}",
        f"{'(d) site.yml on three clusters (forks)':46} {clusters['three_clusters_s']:8.1f} "
        f"{clusters['three_to_one_ratio']:6.2f}  <= {TARGETS['three_to_one_cluster']} x one      "
        f"{verdict(clusters['three_to_one_ratio'], TARGETS['three_to_one_cluster'])}",
        f"{'(d) its CPU floor: busy cpu-s / ' + str(machine_['cpus']) + ' CPUs':46} {clusters['cpu_floor_s']:8.1f} "
        f"{clusters['cpu_floor_ratio']:6.2f}  (one cluster: {clusters['one_cluster_cpu_s']} cpu-s, "
        f"three: {clusters['three_clusters_cpu_s']})",
        f"{'(d) the run alone (Ansible, helm): cpu-s / ' + str(machine_['cpus']) + ' CPUs':46} "
        f"{clusters['run_cpu_floor_s']:8.1f} {clusters['run_cpu_floor_ratio']:6.2f}  (one cluster: "
        f"{clusters['one_cluster_run_cpu_s']} cpu-s, three: {clusters['three_clusters_run_cpu_s']})",
        "",
        f"{'(c) GitLab pools':46} {'converge':>8} {'no-op':>7} {'absent':>7}",
    ]
    for row in result["pools"]:
        rows.append(f"{row['pools']:46d} {row['converge_s']:8.1f} {row['noop_s']:7.1f} {row['absent_s']:7.1f}")
    costs = marginal_costs(result["pools"])
    if costs:
        worst = max(costs)
        steps = ", ".join(f"{a['pools']}->{b['pools']}: {c:.2f}" for a, b, c in
                          zip(result["pools"], result["pools"][1:], costs))
        rows.append(f"{'(c) seconds per added pool, ' + steps:46}")
        rows.append(f"{'(c) worst step':46} {worst:8.2f} {'':6}  <= {TARGETS['seconds_per_added_pool']} s each     "
                    f"{verdict(worst, TARGETS['seconds_per_added_pool'])}")
    rows += ["", "slowest tasks of the site.yml converge (profile_tasks):"]
    rows += [f"  {t['seconds']:7.2f}s  {t['task']}" for t in ref["slowest_tasks"]]
    return "\n".join(rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pools", default=",".join(map(str, POOL_COUNTS)), help="pool counts for (c), e.g. 1,10,50")
    parser.add_argument("--no-documents", action="store_true",
                        help="leave the figures in docs/reliability.md as they are")
    args = parser.parse_args()
    ENV.update(tool_env())
    started_here = ensure_testbed()
    try:
        result = run(tuple(int(n) for n in args.pools.split(",") if n))
    finally:
        if started_here:
            subprocess.run(TESTBED + ["down"], check=False)
    print(table(result))
    # The dated copy is the one the documents cite; latest.json (git-ignored) is always the last run.
    when = dt.datetime.fromisoformat(result["date"]).strftime("%Y-%m-%dT%H%MZ")
    dated = RESULTS / f"{when}-{result['machine']['host']}-{result['machine']['cpus']}cpu.json"
    RESULTS.mkdir(parents=True, exist_ok=True)
    for path in (dated, RESULTS / "latest.json"):
        path.write_text(json.dumps(result, indent=2) + "\n")
    print(f"\nwritten: {dated.relative_to(ROOT)} and latest.json")
    if not args.no_documents:
        write_documents(dated)
        print("its figures written into docs/reliability.md (commit them with the JSON)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
