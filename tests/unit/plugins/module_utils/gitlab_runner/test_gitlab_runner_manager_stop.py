# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Removing a pool waits for its manager to stop: never for less than the manager's grace period.

The helm 4 flake of issue 56: `helm uninstall --cascade foreground --wait --timeout <gitlab_runner_wait_timeout>`
gave up while the manager pod was still in its graceful stop ("Deployment ... still exists. status:
Terminating"), because the role's wait timeout (300 by default, 20 in the fault tests) was shorter than the
pod's terminationGracePeriodSeconds (the chart's 3600).
"""

import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.manager_stop import (
    CHART_GRACE_PERIOD_S,
    STOP_SLACK_S,
    manager_grace_period,
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
    assert release["wait_for_pods"] and release["timeout"] == CHART_GRACE_PERIOD_S + STOP_SLACK_S
    assert plan(20, {"terminationGracePeriodSeconds": 120})["removal"]["timeout"] == 120 + STOP_SLACK_S


def test_installs_and_upgrades_keep_the_roles_wait_timeout():
    (release,) = plan(20, {}, [{"name": "kept", "token": "glrt-x"}])["releases"]
    assert release["timeout"] == 20
