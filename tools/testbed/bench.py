# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Check the testbed's budgets (a benchmark, not a test: it reports, it does not fail).

    python tools/testbed/bench.py [--cold] [--json PATH]

Budgets: warm start to all nodes Ready under 30 s; stop under 10 s with no
process left behind; cold build under 30 minutes on 2 cores (--cold rebuilds
every binary into a temporary cache, which takes that long).
A second testbed is started on other ports and its own state folder, so a
testbed already running for development is left alone.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUDGETS = {"cold_build_s": 1800, "warm_start_s": 30, "stop_s": 10}


def timed(argv: list[str], env: dict) -> float:
    started = time.monotonic()
    subprocess.run(argv, env=env, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - started


def leftover_pids(state: Path) -> list[int]:
    """PIDs recorded by the benchmark's testbed that still run (expected: none)."""
    alive = []
    for record in (state / "pids").glob("*.pid") if (state / "pids").exists() else []:
        pid = json.loads(record.read_text())["pid"]
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if "\nState:\tZ" not in status:  # a zombie has exited; only its parent may reap it
            alive.append(pid)
    return alive


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cold", action="store_true", help="also time a cold build into an empty cache")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()

    results: dict[str, float | int | list] = {}
    with tempfile.TemporaryDirectory(prefix="gpuci-testbed-bench-") as tmp:
        env = dict(os.environ)
        if args.cold:
            cold_env = dict(env, GPUCI_TESTBED_CACHE=str(Path(tmp) / "cache"))
            results["cold_build_s"] = timed(["bash", str(HERE / "build.sh")], cold_env)
        state = Path(tmp) / "state"
        env.update(GPUCI_TESTBED_STATE=str(state), GPUCI_TESTBED_APISERVER_PORT="26443",
                   GPUCI_TESTBED_ETCD_PORT="22379", GPUCI_CHART_REPO_PORT="28879",
                   GPUCI_TESTBED_REAL_NODE="0")  # the real node is one per machine
        results["warm_start_s"] = timed([sys.executable, str(HERE / "testbed.py"), "up", "--ttl", "300"], env)
        pids_dir_copy = {p.name: p.read_text() for p in (state / "pids").glob("*.pid")}
        results["stop_s"] = timed([sys.executable, str(HERE / "testbed.py"), "down"], env)
        # `down` removes the state folder; check the PIDs it had recorded.
        (state / "pids").mkdir(parents=True, exist_ok=True)
        for name, text in pids_dir_copy.items():
            (state / "pids" / name).write_text(text)
        results["processes_left"] = leftover_pids(state)

    print(f"{'measure':<16}{'seconds':>10}{'budget':>10}  verdict")
    for key, budget in BUDGETS.items():
        if key in results:
            verdict = "within budget" if results[key] <= budget else "OVER BUDGET"
            print(f"{key:<16}{results[key]:>10.1f}{budget:>10}  {verdict}")
    print(f"processes left behind after stop: {results['processes_left'] or 'none'}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
