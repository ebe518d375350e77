# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What `make demo` says about metrics: where the runner pools are scraped, and what the scrapes saw.

    demo_metrics.py targets   wait until every runner pool's target is up; print pool, GPU class, address
    demo_metrics.py jobs      the jobs each pool ran while Prometheus watched, and the alert rules' health

It reads the testbed's real Prometheus (tools/testbed/lib/prometheus.py),
whose scrape jobs come from the PodMonitors the gitlab_runner role made.
The target labels are the alert rules' SCRAPE_LABELS, read from the
collection, so a demo that prints pools proves the labels the rules need.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tools" / "testbed"))
sys.path.insert(0, str(REPO / ".collections"))

from lib.layout import Layout  # noqa: E402
from lib.prometheus import SCRAPE_INTERVAL, Prometheus, wait_until  # noqa: E402
from ansible_collections.gpuci.runners.plugins.module_utils.monitoring.alert_rules import SCRAPE_LABELS  # noqa: E402

RUNNER_JOB = SCRAPE_LABELS["job"]
# Long enough for the demo's canary, short enough to be about this run.
WINDOW = "30m"


def runner_targets(client: Prometheus) -> list[dict]:
    return [t for t in client.targets() if t["labels"].get("job") == RUNNER_JOB]


def show_targets(client: Prometheus, timeout: float) -> int:
    def all_up():
        targets = runner_targets(client)
        return bool(targets) and all(t["health"] == "up" for t in targets)
    wait_until(f"every target of job={RUNNER_JOB} up", all_up, timeout,
               detail=lambda: ", ".join(f"{t['labels'].get('pool')} {t['health']}" for t in runner_targets(client)))
    print(f"Prometheus {client.url} scrapes the runner pools' managers (job={RUNNER_JOB}, from their PodMonitors):")
    for target in sorted(runner_targets(client), key=lambda t: t["labels"].get("pool", "")):
        labels = target["labels"]
        print(f"  pool {labels.get('pool')}, GPU class {labels.get('gpu_class', '(none)')}: "
              f"{target['scrapeUrl']} {target['health']} (pod {labels.get('namespace')}/{labels.get('pod')})")
    return 0


def show_jobs(client: Prometheus) -> int:
    pools = {t["labels"].get("pool") for t in runner_targets(client)}
    selector = f'job="{RUNNER_JOB}"'
    # The most jobs running at one scrape (the sum over a pool's stages, then its maximum), and the jobs its
    # managers took since they started (a counter: its highest value in the window).
    running = client.query(f'max_over_time(sum by (pool) (gitlab_runner_jobs{{{selector},state="running"}})'
                           f'[{WINDOW}:{SCRAPE_INTERVAL}])')
    handled = {s["metric"].get("pool"): float(s["value"][1])
               for s in client.query(f"sum by (pool) (max_over_time(gitlab_runner_jobs_total{{{selector}}}[{WINDOW}]))")}
    print(f"What Prometheus scraped from the pools over the last {WINDOW} (gitlab_runner_jobs, gitlab_runner_jobs_total):")
    seen = sorted((s for s in running if s["metric"].get("pool") in pools), key=lambda s: s["metric"].get("pool", ""))
    for sample in seen:
        pool = sample["metric"].get("pool")
        print(f"  pool {pool}: {handled.get(pool, 0):.0f} job(s) taken, "
              f"at most {float(sample['value'][1]):.0f} running at one scrape")
    groups = client.rule_groups()
    rules = [rule for group in groups for rule in group["rules"]]
    healthy = sum(1 for rule in rules if rule.get("health") == "ok")
    firing = sorted({rule["name"] for rule in rules if rule.get("state") == "firing"})
    print(f"Alert rules loaded: {len(rules)} in {len(groups)} group(s), {healthy} evaluated healthy; "
          f"firing: {', '.join(firing) or 'none'}")
    return 0 if seen and healthy == len(rules) else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("targets", "jobs"))
    parser.add_argument("--timeout", type=float, default=180)
    args = parser.parse_args()
    client = Prometheus(Layout.from_environment().prometheus_url)
    return show_targets(client, args.timeout) if args.what == "targets" else show_jobs(client)


if __name__ == "__main__":
    sys.exit(main())
