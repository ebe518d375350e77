# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""gitlab_runner_restarts: the managers whose token Secret the objects' apply changed."""
import json

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.gpuci.runners.plugins.filter.gitlab_runner_restarts import FilterModule
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.plan import gitlab_runner_plan
from ansible_collections.gpuci.runners.plugins.module_utils.gitlab_runner.restarts import gitlab_runner_restarts
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

from test_gitlab_runner_plan import L40S, settings

SECRETS = gitlab_runner_plan(settings(L40S, {"name": "cpu"}))["secrets"]  # the plan's: gitlab-runner-l40s-token, gitlab-runner-cpu-token


def applied_object(name, kind="Secret", namespace="gitlab-runner", changed=True, method="update", version="7"):
    """One object's entry of a kubernetes.core.k8s register (hidden_fields: [data] drops data; stringData stays)."""
    return {"changed": changed, "method": method,
            "result": {"apiVersion": "v1", "kind": kind,
                       "metadata": {"name": name, "namespace": namespace, "resourceVersion": version,
                                    "annotations": {"gpuci.runners/created-in-gitlab": "https://gitlab.example.com/"}},
                       "data": {"runner-token": "Z2xydC1TRUNSRVQ="}, "stringData": {"runner-token": "glrt-SECRET"}}}


def several(*entries):
    """The register when the call applied several objects."""
    return {"changed": any(entry["changed"] for entry in entries), "result": {"results": list(entries)}}


def restarts(applied, secrets=SECRETS):
    return gitlab_runner_restarts({"applied": applied, "secrets": secrets})


def test_a_changed_token_secret_restarts_its_pools_manager():
    assert restarts(several(applied_object("gitlab-runner-l40s-token", version="48213"),
                            applied_object("gitlab-runner-cpu-token", changed=False))) == [
        {"namespace": "gitlab-runner", "deployment": "gitlab-runner-l40s", "resource_version": "48213"}]


def test_one_applied_object_is_the_register_itself():
    assert restarts(applied_object("gitlab-runner-cpu-token", method="apply", version="9")) == [
        {"namespace": "gitlab-runner", "deployment": "gitlab-runner-cpu", "resource_version": "9"}]


@pytest.mark.parametrize("applied", [None, {}, {"changed": False, "skipped": True, "skip_reason": "Conditional result was False"},
                                     {"changed": False, "result": {"results": []}}])
def test_an_apply_that_skipped_or_did_not_run_restarts_nothing(applied):
    assert restarts(applied) == []
    assert gitlab_runner_restarts({"secrets": SECRETS}) == []


def test_a_created_secret_restarts_nothing_its_manager_reads_it_at_start():
    assert restarts(several(applied_object("gitlab-runner-l40s-token", method="create"),
                            applied_object("gitlab-runner-cpu-token"))) == [
        {"namespace": "gitlab-runner", "deployment": "gitlab-runner-cpu", "resource_version": "7"}]
    assert restarts(applied_object("gitlab-runner-l40s-token", method="create")) == []


def test_unchanged_secrets_restart_nothing():
    assert restarts(several(applied_object("gitlab-runner-l40s-token", changed=False),
                            applied_object("gitlab-runner-cpu-token", changed=False))) == []


def test_other_kinds_of_the_same_name_restart_nothing():
    assert restarts(several(applied_object("gitlab-runner-l40s-token", kind="ConfigMap"),
                            applied_object("gitlab-runner-cpu-token", kind="ServiceAccount"))) == []


def test_a_token_secret_in_another_namespace_restarts_nothing():
    assert restarts(several(applied_object("gitlab-runner-l40s-token", namespace="other"),
                            applied_object("gitlab-runner-cpu-token", namespace="arc-runners"))) == []


def test_secrets_the_plan_does_not_name_restart_nothing():
    # site.yml applies every role's objects in one call: ARC's credential Secrets come back too.
    assert restarts(several(applied_object("arc-runners-github", namespace="gitlab-runner"),
                            applied_object("gitlab-runner-gone-token"))) == []
    assert restarts(several(applied_object("gitlab-runner-l40s-token")), secrets=[]) == []


def test_the_deployment_is_the_pools_release_not_a_stripped_suffix():
    secrets = [{"name": "custom-token-secret", "namespace": "gitlab-runner", "pool": "l40s"}]
    assert restarts(applied_object("custom-token-secret"), secrets) == [
        {"namespace": "gitlab-runner", "deployment": "gitlab-runner-l40s", "resource_version": "7"}]


def test_no_secret_data_leaves_the_function():
    result = restarts(several(applied_object("gitlab-runner-l40s-token"), applied_object("gitlab-runner-cpu-token")))
    assert len(result) == 2
    assert all(set(entry) == {"namespace", "deployment", "resource_version"} for entry in result)
    text = json.dumps(result)
    for leak in ("data", "stringData", "runner-token", "glrt-SECRET", "Z2xydC1TRUNSRVQ=", "created-in-gitlab"):
        assert leak not in text


@pytest.mark.parametrize("spec, message", [
    ({"applied": [], "secrets": SECRETS}, r"^restarts\.applied: must be a mapping, not list$"),
    ({"applied": {"result": {"results": {}}}, "secrets": SECRETS}, r"^restarts\.applied\.result\.results: must be a list"),
    ({"applied": {"result": {"results": ["x"]}}, "secrets": SECRETS}, r"^restarts\.applied\.result\.results\[0\]: must be a mapping"),
    ({"applied": {}, "secrets": [{"name": "x", "namespace": "y"}]}, r"^restarts\.secrets\[0\]\.pool: is required"),
    ({"applied": {}, "secrets": SECRETS, "namespace": "gitlab-runner"}, r"^restarts\.namespace: unknown key"),
])
def test_bad_input_names_its_path(spec, message):
    with pytest.raises(ValidationError, match=message):
        gitlab_runner_restarts(spec)


def test_a_changed_secret_without_resource_version_is_an_error_that_shows_no_data():
    entry = applied_object("gitlab-runner-l40s-token", version=None)
    with pytest.raises(ValidationError) as error:
        restarts(several(entry))
    assert str(error.value).startswith("restarts.applied.result.results[0].result.metadata.resourceVersion:")
    assert "SECRET" not in str(error.value) and "Z2xy" not in str(error.value)


def test_filter_reports_errors_the_ansible_way():
    restarts_filter = FilterModule().filters()["gitlab_runner_restarts"]
    assert restarts_filter({"applied": applied_object("gitlab-runner-l40s-token"), "secrets": SECRETS})[0]["deployment"] == \
        "gitlab-runner-l40s"
    with pytest.raises(AnsibleFilterError, match=r"^gpuci\.runners\.gitlab_runner_restarts: restarts\.applied:"):
        restarts_filter({"applied": "changed", "secrets": SECRETS})
