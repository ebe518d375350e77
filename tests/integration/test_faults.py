# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Faults in the middle of a converge, and the run after them.

1. The API server stops while the gitlab_runner role installs its second
   of three releases: the run fails naming the task and the connection
   error; once the API server is back, the next run converges with every
   release deployed exactly once and one token Secret per pool.
2. A Helm upgrade that cannot finish (the runner manager is sent to a node
   nothing matches, with a 20 s wait): the run fails, `atomic` rolls the
   release back so the previous revision, with the previous values, is the
   deployed one, and the next normal run converges.

Scenario 1 stops the shared testbed's API server for as long as the failing
run needs (its 20 s Helm wait); other suites running at that moment see it
too. The API server is started again in a `finally` block whatever happens.
"""
from __future__ import annotations

import re
import threading
import time

import pytest

from helpers import PlaybookRun, helm_releases
from reliability_support import control_component, deployed_releases, wait_for_controllers_to_resume

TOKEN = "glrt-fault-test-placeholder"
CONNECTION_ERRORS = ("Connection refused", "connection refused", "Max retries exceeded", "dial tcp")
TIMEOUT_ERRORS = ("timed out waiting for the condition", "context deadline exceeded", "timed out")
NOWHERE = {"gpuci.runners/fault-test": "no-node-has-this"}


def fleet_vars(prefix: str, pools: list[str], wait: int = 60) -> dict:
    return {
        "gitlab_runner_namespace": f"{prefix}-gitlab-runner",
        "gitlab_runner_fleet": prefix,
        "gitlab_runner_wait_timeout": wait,
        # No placement on the real node: these tests are about Helm and the API
        # server, and a real manager needs 60 s before its first readiness probe.
        # On the simulated CPU nodes the managers are Ready at once.
        "gitlab_runner_extra_values": {},
        "gitlab_runner_pools": [{"name": f"{prefix}-{pool}", "token": TOKEN} for pool in pools],
    }


def failing_task(output: str) -> str:
    """The name of the task whose `fatal:` line comes first."""
    before_fatal = output.split("fatal:", 1)[0]
    tasks = re.findall(r"^TASK \[(.+?)\]", before_fatal, flags=re.MULTILINE)
    return tasks[-1] if tasks else ""


@pytest.fixture
def cleanup(playbooks):
    """Remove the fleets a test made, the role's own way."""
    made: list[dict] = []
    yield made
    for extra_vars in made:
        playbooks.run("gitlab_runner.yml", extra_vars={**extra_vars, "gitlab_runner_state": "absent"})


def test_api_server_lost_mid_converge_then_next_run_converges(testbed, playbooks, cleanup):
    # The lost run fails once Helm's --wait for the release it was waiting on
    # runs out (Helm keeps polling an API server that is gone): 20 s. The
    # rerun gives Helm's --wait the room an operator rerunning after an
    # outage would. The wait is not part of a release's values, so the two
    # runs plan the same releases.
    extra_vars = fleet_vars("rf", ["one", "two", "three"], wait=180)
    namespace = extra_vars["gitlab_runner_namespace"]
    cleanup.append(extra_vars)
    lost_run_vars = {**extra_vars, "gitlab_runner_wait_timeout": 20}
    result: dict[str, PlaybookRun] = {}
    run = threading.Thread(target=lambda: result.update(run=playbooks.run("gitlab_runner.yml", extra_vars=lost_run_vars)))
    run.start()
    stopped_mid_run = False
    try:
        deadline = time.monotonic() + 300
        while run.is_alive() and time.monotonic() < deadline:
            if testbed.get("v1", "Namespace", namespace) and deployed_releases(testbed, namespace):
                break
            time.sleep(0.2)
        stopped_mid_run = run.is_alive()
        control_component("stop")
        run.join(timeout=300)
    finally:
        control_component("start")
    run.join()
    assert stopped_mid_run, "the converge finished before the API server was stopped; nothing was tested"
    # Once the API server is back, the testbed's controller-manager and
    # scheduler resume within about a minute (their watches back off). The
    # rerun, and the tests after this one, start once they act again.
    wait_for_controllers_to_resume(testbed)

    failed = result["run"]
    failed.assert_failed_with("fatal:")
    assert failing_task(failed.output), f"the failure names no task:\n{failed.output[-3000:]}"
    assert any(error in failed.output for error in CONNECTION_ERRORS), \
        f"the failure does not say the API server was unreachable:\n{failed.output[-3000:]}"

    rerun = playbooks.run("gitlab_runner.yml", extra_vars=extra_vars)
    assert rerun.rc == 0, f"the rerun failed:\n{rerun.output[-5000:]}\n\nworkloads:\n{testbed.workload_story(namespace)}"
    records = helm_releases(testbed, namespace)
    deployed = [(r["name"], r["version"]) for r in records if r["status"] == "deployed"]
    names = sorted(name for name, _version in deployed)
    assert names == sorted(f"gitlab-runner-rf-{pool}" for pool in ("one", "two", "three")), deployed
    assert all(version <= 5 for _name, version in deployed), f"more revisions than a retry explains: {deployed}"
    assert not [r for r in records if r["status"].startswith("pending")], "a release is stuck pending"
    secrets = testbed.core.list_namespaced_secret(namespace, label_selector="gpuci.runners/fleet=rf").items
    assert sorted(s.metadata.name for s in secrets) == sorted(f"gitlab-runner-rf-{p}-token" for p in ("one", "two", "three"))
    accounts = testbed.core.list_namespaced_service_account(namespace, label_selector="gpuci.runners/fleet=rf").items
    assert len(accounts) == 3

    assert playbooks.run("gitlab_runner.yml", extra_vars=extra_vars).assert_ok().changed == 0


def test_helm_upgrade_that_cannot_finish_rolls_back(testbed, playbooks, cleanup):
    extra_vars = fleet_vars("rf2", ["one"], wait=20)
    namespace, release = extra_vars["gitlab_runner_namespace"], "gitlab-runner-rf2-one"
    cleanup.append(extra_vars)
    playbooks.run("gitlab_runner.yml", extra_vars=extra_vars).assert_ok()
    good = deployed_releases(testbed, namespace)[(namespace, release)]

    stuck = playbooks.run("gitlab_runner.yml", extra_vars={**extra_vars, "gitlab_runner_extra_values": {"nodeSelector": NOWHERE}})
    stuck.assert_failed_with("fatal:", release)
    assert any(error in stuck.output for error in TIMEOUT_ERRORS), f"no timeout reported:\n{stuck.output[-3000:]}"

    records = [r for r in helm_releases(testbed, namespace) if r["name"] == release]
    deployed = [r for r in records if r["status"] == "deployed"]
    assert len(deployed) == 1, [(r["version"], r["status"]) for r in records]
    assert deployed[0]["version"] > good["version"], "no rollback revision was recorded"
    assert deployed[0]["config"] == good["config"], "the deployed revision does not carry the previous values"
    manager = testbed.apps.read_namespaced_deployment(release, namespace)
    assert not (manager.spec.template.spec.node_selector or {}).get("gpuci.runners/fault-test")

    playbooks.run("gitlab_runner.yml", extra_vars=extra_vars).assert_ok()
    assert len([r for r in helm_releases(testbed, namespace) if r["status"] == "deployed"]) == 1
