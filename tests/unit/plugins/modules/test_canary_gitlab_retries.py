# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""canary_gitlab_pipeline against a fake transport: GitLab's transient errors, and a failure after the commit.

GitLab's answers come from FakeGitLab, a requests transport adapter mounted
on the python-gitlab client's session: each request is answered from a
script per (method, path) and recorded, so a test says exactly which
answers GitLab gave and counts what the module asked. python-gitlab's own
retry loop runs as it would against GitLab; only its backoff's sleep is
recorded instead of slept.
"""
import json
import re
import time
from pathlib import Path

import pytest
import requests

from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary import gitlab_pipeline
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.ci_snippets import canary_ci
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.lanes import canary_lanes
from ansible_collections.gpuci.runners.plugins.module_utils.gpu_canary.proof_report import proof_report
from ansible_collections.gpuci.runners.plugins.plugin_utils.ci_yaml import ci_yaml

URL = "http://gitlab.test"
TOKEN = "glpat-fake-transport-MARK5e1d"
COMMIT = {"id": "c0ffee1234567890c0ffee1234567890c0ffee12", "web_url": URL + "/g/canary/-/commit/c0ffee12"}
PROJECT = {"id": 1, "path_with_namespace": "g/canary", "web_url": URL + "/g/canary",
           "permissions": {"project_access": {"access_level": 40}, "group_access": None}}
PIPELINE = {"id": 7, "web_url": URL + "/g/canary/-/pipelines/7", "status": "pending"}
CPU_JOB = {"id": 11, "name": "gpu-canary-cpu", "status": "success", "tag_list": ["cpu"], "started_at": "t0",
           "finished_at": "t1", "web_url": URL + "/g/canary/-/jobs/11", "runner": {"id": 3, "description": "cpu"}}
CPU_TRACE = "gpu-canary: CPU job ran on runner-11 (Linux)\ngpu-canary: the checkout holds .gitlab-ci.yml\n"
POOLS = [{"name": "cpu", "tags": ["cpu"]}]
REASONS = {200: "OK", 201: "Created", 404: "Not Found", 500: "Internal Server Error", 502: "Bad Gateway",
           503: "Service Unavailable", 504: "Gateway Timeout"}


class FakeGitLab(requests.adapters.BaseAdapter):
    """GitLab's API as a script: ``(METHOD, path pattern) -> [answers]``; each answer ``(status, body)`` is given once
    in turn, the last one again and again. Every request is kept in ``asked``."""

    def __init__(self, script):
        super().__init__()
        self.script = dict((key, list(answers)) for key, answers in script.items())
        self.asked = []

    def send(self, request, **kwargs):
        path = request.path_url.split("?")[0]
        self.asked.append((request.method, path))
        key = next((key for key in self.script if key[0] == request.method and re.fullmatch(key[1], path)), None)
        answers = self.script.get(key) or [(404, {"message": "404 Not Found"})]
        status, body = answers.pop(0) if len(answers) > 1 else answers[0]
        response = requests.Response()
        response.status_code, response.reason, response.url, response.request = (
            status, REASONS.get(status, "Error"), request.url, request)
        if isinstance(body, str):
            response._content, response.headers["Content-Type"] = body.encode(), "text/plain"
        else:
            response._content, response.headers["Content-Type"] = json.dumps(body).encode(), "application/json"
        return response

    def close(self):
        pass

    def count(self, method, pattern):
        return sum(1 for asked in self.asked if asked[0] == method and re.fullmatch(pattern, asked[1]))


def script(changes=None):
    """The answers of a project whose .gitlab-ci.yml is missing, whose one job (the cpu pool's) succeeds."""
    answers = {
        ("GET", r"/api/v4/projects/g%2Fcanary"): [(200, PROJECT)],
        ("GET", r"/api/v4/projects/1/protected_branches/main"): [(404, {"message": "404 Not found"})],
        ("GET", r"/api/v4/projects/1/repository/files/\.gitlab-ci\.yml/raw"): [(404, {"message": "404 File Not Found"})],
        ("POST", r"/api/v4/projects/1/repository/commits"): [(201, COMMIT)],
        ("POST", r"/api/v4/projects/1/pipeline"): [(201, PIPELINE)],
        ("GET", r"/api/v4/projects/1/pipelines/7/jobs"): [(200, [CPU_JOB])],
        ("GET", r"/api/v4/projects/1/pipelines/7"): [(200, dict(PIPELINE, status="success"))],
        ("GET", r"/api/v4/projects/1/jobs/11/trace"): [(200, CPU_TRACE)],
    }
    answers.update(changes or {})
    return answers


@pytest.fixture
def backoff(monkeypatch):
    """python-gitlab's backoff waits, recorded instead of slept."""
    waited = []
    monkeypatch.setattr(time, "sleep", waited.append)
    return waited


def lanes():
    return canary_lanes({"gitlab_pools": POOLS, "cpu_lanes": True, "nodes": [], "runtime_classes": []})


def run(fake):
    session = requests.Session()
    session.mount(URL, fake)
    content = ci_yaml(canary_ci({"lanes": lanes(), "images": {}, "job_timeout": 60})["gitlab_jobs"], "generated")
    params = dict(url=URL, api_token=TOKEN, project="g/canary", ref="main", ci_content=content, pending_timeout=30,
                  run_timeout=60, poll_interval=1, read_pods=False, kubeconfig=None, context=None)
    said = []
    result = gitlab_pipeline.run_module(params, said.append, False, client=gitlab_pipeline.gitlab_client(
        URL, TOKEN, session=session), list_pods=lambda project_id: [], sleep=lambda seconds: None)
    return result, said


def render(role, document):
    """The report's Markdown, as ansible.builtin.template renders it (trim_blocks), with Ansible's regex_replace."""
    jinja2 = pytest.importorskip("jinja2")
    from ansible.plugins.filter.core import regex_replace

    env = jinja2.Environment(trim_blocks=True, undefined=jinja2.StrictUndefined)
    env.filters["regex_replace"] = regex_replace
    return env.from_string((role / "templates" / "proof-report.md.j2").read_text()).render(_gpu_canary_report=document)


def test_a_transient_error_is_retried_with_python_gitlab_s_backoff(backoff):
    fake = FakeGitLab(script({
        ("GET", r"/api/v4/projects/g%2Fcanary"): [
            (502, "<html>Bad Gateway</html>"), (503, {"message": "restarting"}), (200, PROJECT)],
        ("GET", r"/api/v4/projects/1/pipelines/7/jobs"): [(504, "gateway timeout"), (200, [CPU_JOB])]}))
    result, _said = run(fake)
    assert "failed" not in result, result
    assert result["commit"] == COMMIT and result["pipeline"]["status"] == "success"
    assert fake.count("GET", r"/api/v4/projects/g%2Fcanary") == 3
    assert fake.count("GET", r"/api/v4/projects/1/pipelines/7/jobs") == 2
    assert backoff == [0.1, 0.2, 0.1], "python-gitlab's backoff: 0.1 s, doubling, per request"


def test_retries_are_bounded_and_the_error_names_the_url_variable(backoff):
    fake = FakeGitLab(script({("GET", r"/api/v4/projects/g%2Fcanary"): [(503, {"message": "down"})]}))
    result, _said = run(fake)
    assert result["failed"] and result["msg"] == (
        "gpu_canary_gitlab_url: GitLab at %s answered 503 while reading the project: down" % URL)
    assert fake.count("GET", r"/api/v4/projects/g%2Fcanary") == gitlab_pipeline.MAX_RETRIES + 1
    assert len(backoff) == gitlab_pipeline.MAX_RETRIES and sum(backoff) < 10
    assert "commit" not in result, "nothing was committed"


def test_a_commit_that_got_a_transient_error_is_not_sent_again(backoff):
    """A proxy's 502 does not say whether GitLab committed: a second commit could land, so it is not retried."""
    fake = FakeGitLab(script({("POST", r"/api/v4/projects/1/repository/commits"): [
        (502, "bad gateway"), (201, COMMIT)]}))
    result, _said = run(fake)
    assert fake.count("POST", r"/api/v4/projects/1/repository/commits") == 1
    assert fake.count("POST", r"/api/v4/projects/1/pipeline") == 0
    assert result == {"failed": True, "changed": False, "pods_note": "",
                      "msg": "gpu_canary_gitlab_url: GitLab at %s answered 502 while committing .gitlab-ci.yml: "
                             "bad gateway" % URL}


def test_a_failure_after_the_commit_reports_the_commit(backoff):
    fake = FakeGitLab(script({("POST", r"/api/v4/projects/1/pipeline"): [(502, "bad gateway"), (201, PIPELINE)]}))
    result, said = run(fake)
    assert fake.count("POST", r"/api/v4/projects/1/pipeline") == 1, "creating a pipeline is not retried either"
    assert result["failed"] and result["changed"], "the commit changed GitLab"
    assert result["commit"] == COMMIT and result["pipeline"] is None
    assert result["project"] == {"id": 1, "path": "g/canary", "web_url": URL + "/g/canary"}
    assert result["msg"] == (
        "gpu_canary_gitlab_url: GitLab at %s answered 502 while creating a pipeline: bad gateway (before that the "
        "canary committed .gitlab-ci.yml to g/canary@main: %s (%s))" % (URL, COMMIT["id"], COMMIT["web_url"]))
    assert result["summary"] == "The canary's GitLab step failed: %s." % result["msg"]
    assert "diff" not in result and any(COMMIT["id"] in line for line in said)
    # The role goes on to the report with it: the commit is there, each GitLab lane failed with the module's words.
    document = proof_report({"lanes": lanes(), "nodes": [], "job_timeout": 60, "checked_at": "t0", "now": "t1",
                             "gitlab": result, "gitlab_job_timeout": 30, "cluster": {"name": "unit"},
                             "namespace": "gpu-canary", "generated_at": "2026-01-01T00:00:00Z"})
    assert (document["gitlab"]["committed"], document["gitlab"]["commit_url"]) == (COMMIT["id"], COMMIT["web_url"])
    assert document["gitlab"]["error"] == result["msg"]
    (cpu,) = document["lanes"]
    assert cpu["result"] == "failed" and cpu["reason"] == "the canary's GitLab step failed: " + result["msg"]
    jsonschema = pytest.importorskip("jsonschema")
    role = Path(__file__).resolve().parents[4] / "roles" / "gpu_canary"
    jsonschema.validate(document, json.loads((role / "files" / "proof-report.schema.json").read_text()))
    markdown = render(role, document)
    assert "| .gitlab-ci.yml | committed [c0ffee123456](%s) |" % COMMIT["web_url"] in markdown
    assert "| GitLab step failed | %s |" % result["msg"] in markdown


def test_a_failure_while_watching_reports_the_commit_and_the_pipeline(backoff):
    fake = FakeGitLab(script({("GET", r"/api/v4/projects/1/pipelines/7/jobs"): [(500, {"message": "boom"})]}))
    result, _said = run(fake)
    assert fake.count("GET", r"/api/v4/projects/1/pipelines/7/jobs") == gitlab_pipeline.MAX_RETRIES + 1
    assert result["failed"] and result["commit"] == COMMIT
    assert result["pipeline"] == {"id": 7, "web_url": PIPELINE["web_url"], "status": "pending"}
    assert result["msg"].startswith("gpu_canary_gitlab_url: GitLab at %s answered 500 while listing the pipeline's "
                                    "jobs: boom (before that the canary committed .gitlab-ci.yml" % URL)
    assert result["msg"].endswith(" and created pipeline 7 (%s))" % PIPELINE["web_url"])


def test_an_unexpected_answer_after_the_commit_still_reports_the_commit(backoff):
    """A proxy's HTML page where GitLab's JSON should be, or JSON without what GitLab sends: the commit is not lost."""
    fake = FakeGitLab(script({("POST", r"/api/v4/projects/1/pipeline"): [(201, "<html>login</html>")]}))
    result, _said = run(fake)
    assert result["failed"] and result["commit"] == COMMIT
    assert result["msg"].startswith("gpu_canary_gitlab_url: %s answered creating a pipeline with something that is "
                                    "not GitLab's API: " % URL), result["msg"]
    fake = FakeGitLab(script({("POST", r"/api/v4/projects/1/pipeline"): [(201, {"message": "no id"})]}))
    result, _said = run(fake)
    assert result["failed"] and result["commit"] == COMMIT
    assert result["msg"].startswith("gpu_canary_gitlab_url: GitLab cannot be reached at %s: 'id'" % URL), result["msg"]


def test_the_token_is_in_no_failure(backoff):
    fake = FakeGitLab(script({("POST", r"/api/v4/projects/1/pipeline"): [(502, "echo " + TOKEN)]}))
    result, said = run(fake)
    assert result["failed"]
    assert "MARK5e1d" not in json.dumps(result) and "MARK5e1d" not in "\n".join(said)
