# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Removing a pool waits for its manager to stop: never for less than the manager's grace period, and by
the role's own reads, not helm's waiter.

The helm 4 flake of issue 56: `helm uninstall --cascade foreground --wait` answered "Deployment ... still
exists. status: Terminating" while the manager pod was in its graceful stop, first because the wait was
shorter than the pod's terminationGracePeriodSeconds, then (with a long enough wait) because helm 4.3.1's
delete waiter stops watching early (docs/reliability.md).
"""

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.manager_stop import (
    CHART_GRACE_PERIOD_S,
    POLL_S,
    STOP_SLACK_S,
    manager_grace_period,
    manager_wait,
    removal_timeout,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import gitlab_runner_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.removals import gitlab_runner_removals


def test_the_chart_default_grace_period_is_the_charts():
    # gitlab-runner 0.86.0, values.yaml: terminationGracePeriodSeconds: 3600
    assert CHART_GRACE_PERIOD_S == 3600
    assert manager_grace_period({}) == manager_grace_period(None) == 3600


@pytest.mark.parametrize("wait_timeout", [20, 60, 300])
def test_a_removal_waits_at_least_the_managers_grace_period(wait_timeout):
    assert removal_timeout(wait_timeout, {}) == CHART_GRACE_PERIOD_S + STOP_SLACK_S


def test_a_longer_wait_timeout_is_kept():
    assert removal_timeout(7200, {}) == 7200


def test_the_grace_period_set_in_extra_values_decides():
    assert removal_timeout(300, {"terminationGracePeriodSeconds": 30}) == 300
    assert removal_timeout(20, {"terminationGracePeriodSeconds": 30}) == 30 + STOP_SLACK_S
    assert removal_timeout(20, {"terminationGracePeriodSeconds": 0}) == STOP_SLACK_S


@pytest.mark.parametrize("odd", ["30", 1.5, True, -1, None])
def test_a_grace_period_that_is_not_a_whole_number_waits_as_for_the_charts(odd):
    assert manager_grace_period({"terminationGracePeriodSeconds": odd}) == CHART_GRACE_PERIOD_S


def plan(wait_timeout, extra_values, pools=({"name": "gone", "state": "absent"},)):
    return gitlab_runner_plan({
        "gitlab_runner_pools": list(pools),
        "gitlab_runner_namespace": "gitlab-runner", "gitlab_runner_fleet": "ci",
        "gitlab_runner_gitlab_url": "https://gitlab.example.com/", "gitlab_runner_concurrent": 2,
        "gitlab_runner_runtime_class": None, "gitlab_runner_manager_resources": {},
        "gitlab_runner_job_rbac_rules": [], "gitlab_runner_extra_values": extra_values,
        "gitlab_runner_chart_version": "0.86.0", "gitlab_runner_chart_repo_url": "https://charts.gitlab.io",
        "gitlab_runner_chart_path": "", "gitlab_runner_wait_timeout": wait_timeout,
        "gitlab_runner_access_token": "glpat-x"})


def test_the_removed_pools_uninstall_waits_the_grace_period_not_the_wait_timeout():
    removal = plan(20, {})["removal"]
    assert removal["timeout"] == CHART_GRACE_PERIOD_S + STOP_SLACK_S
    (release,) = gitlab_runner_removals({"pools": plan(20, {})["pools"], "found": [], "state": "present",
                                         "prune": True, "namespace": "gitlab-runner",
                                         "timeout": removal["timeout"]})["releases"]
    assert release["cascade"] == "foreground" and not release["wait"]
    assert release["timeout"] == CHART_GRACE_PERIOD_S + STOP_SLACK_S
    assert plan(20, {"terminationGracePeriodSeconds": 120})["removal"]["timeout"] == 120 + STOP_SLACK_S


def test_installs_and_upgrades_keep_the_roles_wait_timeout():
    (release,) = plan(20, {}, [{"name": "kept", "token": "glrt-x"}])["releases"]
    assert release["timeout"] == 20


def test_the_role_waits_for_each_namespaces_deployments_and_pods_of_the_removed_releases():
    releases = [{"name": "gitlab-runner-a", "namespace": "ci"}, {"name": "gitlab-runner-b", "namespace": "other"},
                {"name": "gitlab-runner-c", "namespace": "ci"}]
    wait = manager_wait(releases, 3660)
    assert [(r["namespace"], r["kind"], r["label_selectors"]) for r in wait["reads"]] == [
        ("ci", "Deployment", ["release in (gitlab-runner-a,gitlab-runner-c)"]),
        ("ci", "Pod", ["release in (gitlab-runner-a,gitlab-runner-c)"]),
        ("other", "Deployment", ["release in (gitlab-runner-b)"]),
        ("other", "Pod", ["release in (gitlab-runner-b)"])]
    assert len({r["key"] for r in wait["reads"]}) == 4  # k8s_reads needs a key per read
    # Every retry a poll: the retries cover the whole timeout, rounded up.
    assert wait["delay"] == POLL_S and wait["retries"] * POLL_S >= 3660 > (wait["retries"] - 1) * POLL_S
    assert manager_wait([], 60)["reads"] == []


def test_the_removals_wait_for_the_managers_of_exactly_the_releases_they_uninstall():
    result = gitlab_runner_removals({"pools": plan(20, {})["pools"], "found": [], "state": "absent",
                                     "prune": True, "namespace": "gitlab-runner", "timeout": 3660})
    names = ",".join(release["name"] for release in result["releases"])
    assert names and {tuple(r["label_selectors"]) for r in result["manager_wait"]["reads"]} == {
        (f"release in ({names})",)}
    assert result["manager_wait"]["timeout"] == 3660
