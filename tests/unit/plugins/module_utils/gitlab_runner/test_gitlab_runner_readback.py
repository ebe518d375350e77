# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gitlab_runner_readback: the plan's releases against the ConfigMaps and Deployments read back."""
import pytest

from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import gitlab_runner_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.readback import gitlab_runner_readback
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

SETTINGS = {
    "gitlab_runner_pools": [{"name": "l40s", "gpu_class": "l40s", "gpus": 1}, {"name": "cpu"}],
    "gitlab_runner_namespace": "gitlab-runner", "gitlab_runner_fleet": "default",
    "gitlab_runner_gitlab_url": "https://gitlab.example.com/", "gitlab_runner_concurrent": 4,
    "gitlab_runner_runtime_class": None, "gitlab_runner_manager_resources": {"requests": {"cpu": "100m"}},
    "gitlab_runner_job_rbac_rules": [], "gitlab_runner_extra_values": {}, "gitlab_runner_chart_version": "0.86.0",
    "gitlab_runner_chart_repo_url": "https://charts.gitlab.io", "gitlab_runner_chart_path": "",
    "gitlab_runner_wait_timeout": 300, "gitlab_runner_access_token": "glpat-UNIT",
}
RELEASES = gitlab_runner_plan(SETTINGS)["releases"]


def configmap(release, config=None):
    text = release["values"]["runners"]["config"] if config is None else config
    return {"metadata": {"name": release["name"], "namespace": release["namespace"]},
            "data": {"config.template.toml": text, "entrypoint": "#!/bin/bash"}}


def deployment(release):
    return {"metadata": {"name": release["name"], "namespace": release["namespace"]}}


def readback(configmaps, managers, releases=RELEASES):
    return gitlab_runner_readback({"releases": releases, "configmaps": configmaps, "managers": managers})


def test_a_fleet_that_holds_what_was_rendered_is_verified():
    assert readback([configmap(r) for r in RELEASES], [deployment(r) for r in RELEASES]) == []


def test_a_config_taken_for_a_template_is_found():
    # What Helm's tpl would make of a "{{ ... }}" inside config.toml.
    changed = configmap(RELEASES[0], RELEASES[0]["values"]["runners"]["config"].replace("[[runners]]", "[[runner]]"))
    problems = readback([changed, configmap(RELEASES[1])], [deployment(r) for r in RELEASES])
    assert problems == ["ConfigMap gitlab-runner/gitlab-runner-l40s does not hold the config.toml rendered for pool l40s"]


def test_a_missing_configmap_and_manager_are_both_reported():
    problems = readback([configmap(RELEASES[1])], [deployment(RELEASES[1])])
    assert problems == [
        "ConfigMap gitlab-runner/gitlab-runner-l40s is missing: the release rendered no config.toml",
        "expected one runner manager Deployment per present pool (gitlab-runner-l40s, gitlab-runner-cpu); "
        "found gitlab-runner-cpu",
    ]


def test_a_configmap_in_another_namespace_does_not_count():
    moved = configmap(RELEASES[0])
    moved["metadata"]["namespace"] = "elsewhere"
    problems = readback([moved, configmap(RELEASES[1])], [deployment(r) for r in RELEASES])
    assert problems == ["ConfigMap gitlab-runner/gitlab-runner-l40s is missing: the release rendered no config.toml"]


def test_no_present_pool_needs_nothing():
    assert readback([], [], releases=[]) == []


def test_bad_input_names_its_path():
    with pytest.raises(ValidationError, match=r"^readback\.configmaps: must be a list"):
        gitlab_runner_readback({"releases": [], "configmaps": {}})
    with pytest.raises(ValidationError, match=r"^readback\.pods: unknown key"):
        gitlab_runner_readback({"pods": []})
