# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Role gitlab_runner creates the runner of a pool without a token, through GitLab's API.

Against the testbed's GitLab stand-in (tools/testbed/gitlab_standin.py), which
serves the REST calls community.general.gitlab_runner makes with python-gitlab.
The tests run in file order: check mode creates nothing, converge creates one
runner and keeps its token only in the pool's Secret, a rerun creates nothing,
removal without the access token is refused before any change, removal with it
deletes the runner in GitLab too.
"""
from __future__ import annotations

import base64
import json
import os
import urllib.request

import pytest

from gitlab_standin import token_fingerprint  # tools/testbed, put on sys.path by conftest.py
from lib.layout import Layout

PLAYBOOK = "gitlab_runner.yml"
FLEET = "gitlab-runner-created"
NAMESPACE = "gitlab-runner-created"
POOL = "made-by-role"
SECRET = f"gitlab-runner-{POOL}-token"
ACCESS_TOKEN = "glpat-gpuci-test-access-token"
# GPUCI_GITLAB_STANDIN_URL points the tests at a stand-in started by hand (a private testbed has none).
STANDIN = os.environ.get("GPUCI_GITLAB_STANDIN_URL", Layout.from_environment().gitlab_standin_url).rstrip("/") + "/"


def fleet_vars(**extra) -> dict:
    pool = {"name": POOL, "namespace": NAMESPACE, "cpu_request": "100m", "tags": ["cpu", "created"],
            "gitlab_url": STANDIN}
    return {"gitlab_runner_fleet": FLEET, "gitlab_runner_namespace": NAMESPACE, "gitlab_runner_pools": [pool],
            "gitlab_runner_access_token": ACCESS_TOKEN, **extra}


def standin_runners() -> list[dict]:
    """The runners the stand-in holds under our pool's name."""
    with urllib.request.urlopen(STANDIN.rstrip("/") + "/gpuci-standin/runners", timeout=10) as response:
        return [r for r in json.loads(response.read()) if r["description"] == POOL]


def stored_token(cluster) -> str | None:
    secret = cluster.get("v1", "Secret", SECRET, NAMESPACE)
    return base64.b64decode(secret["data"]["runner-token"]).decode() if secret else None


@pytest.fixture(scope="module")
def standin(testbed, playbooks):
    """The stand-in, reachable; we start from nothing of ours (a run may have been interrupted) and end so."""
    try:
        standin_runners()
    except OSError as error:
        pytest.skip(f"no GitLab stand-in at {STANDIN} (it runs with the testbed's real node): {error}")
    teardown = fleet_vars(gitlab_runner_state="absent")
    if testbed.get("v1", "Namespace", NAMESPACE) or standin_runners():
        playbooks.run(PLAYBOOK, extra_vars=teardown).assert_ok()
    yield
    if testbed.get("v1", "Namespace", NAMESPACE):
        playbooks.run(PLAYBOOK, extra_vars=teardown)


def test_check_mode_creates_no_runner(testbed, playbooks, standin):
    assert standin_runners() == [], "a previous run left a runner behind"
    run = playbooks.run(PLAYBOOK, extra_vars=fleet_vars(), check=True).assert_ok()
    assert run.changed > 0
    assert standin_runners() == []
    assert testbed.get("v1", "Namespace", NAMESPACE) is None


def test_converge_creates_the_runner_and_keeps_its_token_in_the_secret_only(testbed, playbooks, standin):
    run = playbooks.run(PLAYBOOK, extra_vars=fleet_vars(), verbosity=2).assert_ok()
    assert run.changed > 0
    (runner,) = standin_runners()
    assert sorted(runner["tag_list"]) == ["cpu", "created"]
    token = stored_token(testbed)
    assert token and token.startswith("glrt-")
    assert token_fingerprint(token) == runner["token_sha256"], "the Secret holds another token than GitLab gave"
    secret = testbed.get("v1", "Secret", SECRET, NAMESPACE)
    assert secret["metadata"]["annotations"]["gpuci.runners/created-in-gitlab"] == STANDIN
    assert token not in run.output and ACCESS_TOKEN not in run.output
    for configmap in testbed.list("v1", "ConfigMap", namespace=NAMESPACE):
        assert token not in json.dumps(configmap.get("data"))


def test_rerun_creates_nothing(testbed, playbooks, standin):
    (before,) = standin_runners()
    token = stored_token(testbed)
    run = playbooks.run(PLAYBOOK, extra_vars=fleet_vars()).assert_ok()
    assert run.changed == 0, run.output[-4000:]
    assert standin_runners() == [before]
    assert stored_token(testbed) == token


def test_removal_without_the_access_token_is_refused_before_any_change(testbed, playbooks, standin):
    run = playbooks.run(PLAYBOOK, extra_vars=fleet_vars(gitlab_runner_state="absent", gitlab_runner_access_token=""))
    run.assert_failed_with("created the GitLab runners of", POOL, "gitlab_runner_access_token")
    assert len(standin_runners()) == 1
    assert stored_token(testbed) is not None


def test_state_absent_deletes_the_runner_in_gitlab_too(testbed, playbooks, standin):
    run = playbooks.run(PLAYBOOK, extra_vars=fleet_vars(gitlab_runner_state="absent")).assert_ok()
    assert run.changed > 0
    assert standin_runners() == []
    assert testbed.get("v1", "Secret", SECRET, NAMESPACE) is None
