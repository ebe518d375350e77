# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What each cluster role's plan says it reads: valid k8s_reads reads, under the role's group, unique keys.

site.yml sends every role's reads in one k8s_reads run and each role finds
its answers under its own group; the read-back goes the same way.
"""
import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.plan import arc_runners_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import gitlab_runner_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.plan import gpu_operator_plan
from ansible_collections.gpuci.runners.plugins.module_utils.k8s.reads import duplicate_keys

import test_arc_runners_plan as arc
import test_gitlab_runner_plan as gitlab
import test_gpu_operator_plan as gpu
from test_k8s_reads import filled

PLANS = {
    "gpu_operator": lambda **o: gpu_operator_plan(gpu.settings(**o)),
    "gitlab_runner": lambda **o: gitlab_runner_plan(gitlab.settings(gitlab.L40S, **o)),
    "arc_runners": lambda **o: arc_runners_plan(arc.settings(arc.L40S, **o)),
}


@pytest.mark.parametrize("role", sorted(PLANS))
def test_reads_are_valid_grouped_by_the_role_and_keyed_once(role):
    plan = PLANS[role]()
    for reads in (plan["reads"], plan["readback_reads"]):
        assert reads and all(read["group"] == role for read in reads)
        assert duplicate_keys(filled(reads)) == []
    assert plan["converges"] is True


@pytest.mark.parametrize("role", sorted(PLANS))
def test_helm_release_records_are_read_as_releases(role):
    (records,) = [read for read in PLANS[role]()["reads"] if read["key"] == "release_records"]
    assert records["kind"] == "Secret" and records["helm_releases"] is True
    assert records["label_selectors"][:2] == ["owner=helm", "status!=superseded"]


@pytest.mark.parametrize("role", sorted(PLANS))
def test_a_role_removed_converges_nothing(role):
    assert PLANS[role](**{"%s_state" % role: "absent"})["converges"] is False


def test_arc_converges_nothing_when_nothing_of_it_is_declared():
    assert arc_runners_plan(arc.settings())["converges"] is False
    assert arc_runners_plan(arc.settings(arc_runners_controller_enabled=True))["converges"] is True


def test_the_waits_of_the_read_back_take_the_roles_timeouts():
    deployment = [r for r in gpu_operator_plan(gpu.settings(gpu_operator_wait_timeout=42))["readback_reads"]
                  if r["key"] == "deployment"][0]
    assert deployment["wait"] is True and deployment["wait_timeout"] == 42
    managers = [r for r in gitlab_runner_plan(gitlab.settings(gitlab.L40S, gitlab_runner_wait_timeout=7))["readback_reads"]
                if r["key"] == "managers"][0]
    assert managers["wait_timeout"] == 7 and managers["label_selectors"] == ["release in (gitlab-runner-l40s)"]


def test_a_fleet_without_present_pools_reads_nothing_back():
    assert gitlab_runner_plan(gitlab.settings(dict(gitlab.L40S, state="absent")))["readback_reads"] == []
