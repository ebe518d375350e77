# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One cluster's plan put together from the roles' real plans: releases in site.yml's order, Secret names
without data, the roles' own objects, the canary's lanes and a console summary."""

import json

from ansible_collections.gpuci.runners.plugins.module_utils.arc_runners.plan import arc_runners_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.lanes import canary_lanes
from ansible_collections.gpuci.runners.plugins.module_utils.fleet.plan import fleet_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import gitlab_runner_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_operator.plan import gpu_operator_plan

from test_arc_runners_plan import L40S as ARC_L40S
from test_arc_runners_plan import settings as arc_settings
from test_gitlab_runner_plan import CPU, L40S
from test_gitlab_runner_plan import settings as gitlab_settings
from test_gpu_operator_plan import settings as operator_settings

GITLAB_PUBLIC = [{k: v for k, v in pool.items() if k != "token"} for pool in (L40S, CPU)]
ARC_PUBLIC = [{k: v for k, v in ARC_L40S.items() if k != "github_token"}]


def whole_plan(**parts):
    defaults = {
        "gpu_operator": gpu_operator_plan(operator_settings(gpu_operator_time_slicing={"l40s": 2})),
        # The runner roles' plans take the inventory as written, credentials included, and drop them.
        "gitlab_runner": gitlab_runner_plan(gitlab_settings(L40S, CPU)),
        "arc_runners": arc_runners_plan(arc_settings(ARC_L40S)),
        "canary_lanes": canary_lanes({"gitlab_pools": GITLAB_PUBLIC, "arc_scale_sets": ARC_PUBLIC}),
    }
    defaults.update(parts)
    return fleet_plan(defaults)


def test_releases_come_in_site_order_with_their_complete_values():
    plan = whole_plan()
    assert [(r["role"], r["name"]) for r in plan["releases"]] == [
        ("gpu_operator", "gpu-operator"), ("gitlab_runner", "gitlab-runner-l40s"), ("gitlab_runner", "gitlab-runner-cpu"),
        ("arc_runners", "arc"), ("arc_runners", "l40s")]
    operator = plan["releases"][0]
    assert operator["chart"] == "gpu-operator" and operator["version"] == "v26.7.0"
    assert operator["values"]["devicePlugin"]["config"]["name"] == "gpuci-device-plugin-config"
    assert "config.template.toml" not in json.dumps(plan["releases"][1]["values"])  # values, not what the chart renders
    assert "[[runners]]" in plan["releases"][1]["values"]["runners"]["config"]


def test_secrets_are_named_and_no_credential_enters_the_plan():
    plan = whole_plan()
    assert [(s["role"], s["name"]) for s in plan["secrets"]] == [
        ("gitlab_runner", "gitlab-runner-l40s-token"), ("gitlab_runner", "gitlab-runner-cpu-token"),
        ("arc_runners", "l40s-github-config")]
    text = json.dumps(plan)
    assert "PLAN-SECRET" not in text


def test_objects_namespaces_and_lanes():
    plan = whole_plan()
    kinds = [(o["role"], o["kind"]) for o in plan["objects"]]
    assert ("gitlab_runner", "ServiceAccount") in kinds and ("gpu_operator", "ConfigMap") in kinds
    assert plan["namespaces"][0] == "gpu-operator" and "arc-systems" in plan["namespaces"]
    lane = next(lane for lane in plan["canary_lanes"] if lane["gpu_class"] == "l40s")
    assert lane["gitlab_pools"] == ["l40s"] and lane["arc_scale_sets"] == ["l40s"]
    assert any(line.startswith("canary lane ") and "proves l40s, l40s" in line for line in plan["summary"])


def test_summary_says_what_each_release_is():
    plan = whole_plan(offline=True)
    assert plan["summary"][1] == "release gpu-operator/gpu-operator: chart gpu-operator v26.7.0 (gpu_operator)"
    assert "secret gitlab-runner/gitlab-runner-l40s-token (gitlab_runner; data not shown)" in plan["summary"]


def test_a_cluster_with_nothing_declared_says_so():
    plan = fleet_plan({"gpu_operator": None, "gitlab_runner": None, "arc_runners": None, "canary_lanes": []})
    assert plan["releases"] == [] and plan["summary"] == [
        "Did not look at the cluster (no role converges anything here, or the tags of this run leave every role out): "
        "what site would make, not what it would change",
        "nothing: the inventory declares no GPU Operator, pool or scale set for this cluster"]
    assert plan["cluster"] == {"looked": False, "why": "no role converges anything here, or the tags of this run leave "
                                                       "every role out"}


CHANGES = {"roles": {"gitlab_runner": {"name": "GitLab runner pools", "add": [], "remove": [], "notes": [],
                                       "change": [{"what": "release gitlab-runner/gitlab-runner-cpu",
                                                   "diff": ["concurrent: 2 -> 3"]}]}},
           "lines": ["GitLab runner pools: 1 to change", "  change release gitlab-runner/gitlab-runner-cpu",
                     "      concurrent: 2 -> 3"], "none": False}


def test_a_plan_that_read_the_cluster_shows_what_site_would_change_and_the_roles_it_left_out():
    plan = whole_plan(changes=CHANGES)
    assert plan["cluster"] == {"looked": True, "why": ""}
    assert plan["changes"] == CHANGES["roles"]
    assert plan["summary"] == ["Read the cluster, changed nothing: what site would add, change and remove"] \
        + CHANGES["lines"] + ["GPU Operator: not compared, the tags of this run leave it out",
                              "ARC: not compared, the tags of this run leave it out"]
    settled = dict(CHANGES, lines=["GitLab runner pools: no changes"], none=True)
    assert whole_plan(changes=settled, gpu_operator=None, arc_runners=None)["summary"] == [
        "Read the cluster, changed nothing: site would change nothing", "GitLab runner pools: no changes"]


def test_a_plan_that_did_not_look_says_why_and_shows_what_site_would_make():
    offline = whole_plan(changes=None, offline=True)
    assert offline["cluster"] == {"looked": False, "why": "gpuci_plan_offline is set"} and offline["changes"] is None
    assert offline["summary"][0] == "Did not look at the cluster (gpuci_plan_offline is set): what site would make, " \
                                    "not what it would change"
    assert "release gitlab-runner/gitlab-runner-cpu: chart gitlab-runner 0.86.0 (gitlab_runner)" in offline["summary"]
    # offline wins over a decision (none is made then), and a read that failed is quoted, credentials masked.
    assert whole_plan(changes=CHANGES, offline=True)["cluster"]["looked"] is False
    unread = whole_plan(read_error="Cannot reach the Kubernetes API server at https://admin:pw@10.0.0.1:6443")
    assert unread["cluster"]["why"] == "the cluster could not be read: Cannot reach the Kubernetes API server at " \
                                       "https://***@10.0.0.1:6443"


def test_chart_repository_credentials_in_a_url_never_reach_the_plan():
    plan = whole_plan(gitlab_runner=gitlab_runner_plan(gitlab_settings(
        L40S, CPU, gitlab_runner_chart_repo_url="https://deploy:REPO-SECRET@charts.example.com/gitlab")), offline=True)
    gitlab = [release for release in plan["releases"] if release["role"] == "gitlab_runner"]
    assert [release["repository"] for release in gitlab] == ["https://***@charts.example.com/gitlab"] * 2
    assert "REPO-SECRET" not in json.dumps(plan)
