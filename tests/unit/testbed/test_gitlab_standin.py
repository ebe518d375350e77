# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GitLab stand-in answers the runner API subset and records no token."""
import json
import threading
import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer

import pytest

import gitlab_standin

TOKEN = "glrt-unit-test-token-never-recorded"


@pytest.fixture
def standin(tmp_path):
    gitlab_standin.StandIn.record = tmp_path / "record.jsonl"
    server = ThreadingHTTPServer(("127.0.0.1", 0), gitlab_standin.StandIn)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", tmp_path / "record.jsonl"
    server.shutdown()


def _post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()


def test_verify_and_request_for_a_runner_token(standin):
    base, record = standin
    status, body = _post(base + "/api/v4/runners/verify", {"token": TOKEN})
    assert status == 200
    assert json.loads(body)["id"] == gitlab_standin.runner_id(TOKEN)
    assert _post(base + "/api/v4/jobs/request", {"token": TOKEN})[0] == 204
    assert _post(base + "/api/v4/runners/verify", {"token": "not-a-runner-token"})[0] == 403
    assert _post(base + "/api/v4/unknown", {"token": TOKEN})[0] == 404
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    assert [(r["endpoint"], r["status"]) for r in lines] == [
        ("/api/v4/runners/verify", 200), ("/api/v4/jobs/request", 204),
        ("/api/v4/runners/verify", 403), ("/api/v4/unknown", 404)]
    assert lines[0]["token_sha256"] == gitlab_standin.token_fingerprint(TOKEN)
    assert TOKEN not in record.read_text()
