# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The testbed's helm (3, or 4 under `make helm4-tests`) pulls with a repository's credentials from a private file.

helm_releases keeps a chart repository's user and password, given in its
URL, off helm's command line (module_utils/k8s/helm_releases.pull_steps:
a repositories file for http(s), a registry configuration for oci://).
This proves the real helm reads them there: a chart repository that
answers only with the login serves the chart, while the same URL without
the login is refused; a registry stand-in sees helm present the login.
Every helm argv is recorded, as `ps` would show it, and holds neither.
No cluster is used: pulls only.
"""
from __future__ import annotations

import base64
import os
import shutil
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import helpers
import pytest
from ansible_collections.gpuci.runners.plugins.module_utils.k8s.helm_releases import Helm, HelmError

USER, PASSWORD = "chart-reader", "p@ss-CREDENTIALS-test"
LOGIN = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
# The password as a URL writes it.
QUOTED = PASSWORD.replace("@", "%40")


class _Repository(BaseHTTPRequestHandler):
    """A chart repository and an OCI registry that answer only with the login; every request recorded."""

    served = ""
    requests: list[tuple[str, bool]] = []

    def log_message(self, *args):
        pass

    def do_GET(self):
        granted = self.headers.get("Authorization") == LOGIN
        self.requests.append((self.path, granted))
        if not granted:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="charts"')
            self.end_headers()
            return
        path = os.path.join(self.served, self.path.lstrip("/"))
        if self.path.startswith("/v2") or not os.path.isfile(path):
            # The registry stand-in serves no chart: it only has to see the login.
            self.send_response(404)
            self.end_headers()
            return
        body = open(path, "rb").read()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def helm_binary():
    helm = shutil.which("helm", path=helpers.testbed_bin_path())
    assert helm, "the testbed's helm is not built (bash tools/testbed/build.sh helm)"
    return helm


@pytest.fixture(scope="module")
def repository(helm_binary, tmp_path_factory):
    """The base URL of a chart repository holding chart `creds-check` 0.1.0, behind a login."""
    served = tmp_path_factory.mktemp("served")
    chart = tmp_path_factory.mktemp("chart") / "creds-check"
    (chart / "templates").mkdir(parents=True)
    (chart / "Chart.yaml").write_text("apiVersion: v2\nname: creds-check\nversion: 0.1.0\n")
    subprocess.run([helm_binary, "package", str(chart), "--destination", str(served)], check=True, capture_output=True)
    subprocess.run([helm_binary, "repo", "index", str(served)], check=True, capture_output=True)
    _Repository.served, _Repository.requests = str(served), []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Repository)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()


class _RecordedRun:
    """helm_releases' process runner, recording each argv; helm's own configuration kept out of ~/.config."""

    def __init__(self, home):
        self.argvs, self.home = [], home

    def __call__(self, argv):
        if argv[1] == "pull" and argv[2].startswith("oci://"):
            argv = argv + ["--plain-http"]  # the stand-in registry speaks http
        self.argvs.append(argv)
        env = dict(os.environ, HELM_CONFIG_HOME=str(self.home / "config"), HELM_CACHE_HOME=str(self.home / "cache"),
                   HELM_DATA_HOME=str(self.home / "data"))
        proc = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=120)
        return proc.returncode, proc.stdout, proc.stderr

    def leaked(self):
        return [argv for argv in self.argvs if USER in " ".join(argv) or PASSWORD in " ".join(argv)
                or QUOTED in " ".join(argv)]


def _release(url):
    return {"name": "creds-check", "namespace": "unused", "chart": "creds-check", "chart_version": "0.1.0",
            "chart_repo_url": url}


def _pull(helm_binary, tmp_path, url):
    run = _RecordedRun(tmp_path)
    destination = tmp_path / "work" / "chart"
    destination.mkdir(parents=True)
    try:
        return run, Helm(run, helm_binary).pull(_release(url), str(destination)), None
    except HelmError as error:
        return run, None, str(error)


def test_a_chart_repository_login_reaches_helm_through_its_repositories_file(helm_binary, repository, tmp_path):
    run, pulled, error = _pull(helm_binary, tmp_path, f"http://{USER}:{QUOTED}@{repository}/")
    assert error is None and os.path.basename(pulled) == "creds-check-0.1.0.tgz", error
    assert not run.leaked(), run.leaked()
    assert [argv[1:3] for argv in run.argvs] == [["repo", "update"], ["pull", "gpuci-chart-repository/creds-check"]]
    assert ("/index.yaml", True) in _Repository.requests and ("/creds-check-0.1.0.tgz", True) in _Repository.requests


def test_without_the_login_the_repository_refuses(helm_binary, repository, tmp_path):
    """So the pull above got the chart by the login helm read from the file."""
    _run, pulled, error = _pull(helm_binary, tmp_path, f"http://{repository}/")
    assert pulled is None and "401" in error, error


def test_a_registry_login_reaches_helm_through_its_registry_configuration(helm_binary, repository, tmp_path):
    _Repository.requests.clear()
    run, _pulled, error = _pull(helm_binary, tmp_path, f"oci://{USER}:{QUOTED}@{repository}/charts")
    assert not run.leaked(), run.leaked()
    assert "--registry-config" in run.argvs[0]
    # helm asks without the login first, is told to authenticate, then presents the login from the file.
    assert any(granted for path, granted in _Repository.requests if path.startswith("/v2/charts/creds-check")), (
        _Repository.requests, error)
    assert PASSWORD not in (error or "") and USER not in (error or "")
