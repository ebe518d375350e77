# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The GitLab stand-in (tools/testbed/gitlab_standin.py) as a process, and a loop that STANDS IN FOR A RUNNER.

The loop is not GitLab Runner: it polls POST /api/v4/jobs/request with a
seeded runner token, as a runner does, and answers each job it gets with a
trace and a final state from a table (PATCH /api/v4/jobs/:id/trace, PUT
/api/v4/jobs/:id). It shows that the canary's module commits, starts a
pipeline, waits and reads what a runner reported; the real GitLab Runner on
the testbed's real node runs the canary's jobs in
tests/integration/test_canary_gitlab.py.
"""
from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[4]
STANDIN = REPO / "tools" / "testbed" / "gitlab_standin.py"


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def call(url, method="GET", body=None, headers=None):
    data = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
    hdrs = dict(headers or {})
    if isinstance(body, (dict, list)):
        hdrs["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, method=method, headers=hdrs)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


class StandIn:
    """The stand-in process on a free port, with runners seeded (their tokens, tags)."""

    def __init__(self, tmp_path, runners):
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.record = tmp_path / "record.jsonl"
        seed = tmp_path / "runners.json"
        seed.write_text(json.dumps(runners))
        self.process = subprocess.Popen(
            [sys.executable, str(STANDIN), "--listen", "127.0.0.1:%d" % self.port, "--record", str(self.record),
             "--repos", str(tmp_path / "repos"), "--runners", str(seed)],
            cwd=str(STANDIN.parent), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError("the stand-in exited: %s" % self.process.stderr.read().decode())
                time.sleep(0.1)
        raise RuntimeError("the stand-in did not listen within 20s")

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)

    def record_text(self):
        return self.record.read_text() if self.record.exists() else ""

    def commits(self, access_token, project="gpuci%2Fcanary"):
        """How many commits the project has, counted from the bare repository."""
        git_dir = self.record.parent / "repos" / "gpuci" / "canary.git"
        out = subprocess.run(["git", "--git-dir", str(git_dir), "rev-list", "--count", "main"], capture_output=True,
                             text=True, check=True)
        return int(out.stdout.strip())

    def job(self, job_id):
        status, body = call(self.url + "/gpuci-standin/jobs/%d" % job_id)
        assert status == 200, body
        return json.loads(body)


class FakeRunner(threading.Thread):
    """STANDS IN FOR A RUNNER (see the module docstring): takes jobs by its token and reports a canned result.

    ``answers`` maps a job name to (trace text, state); the trace starts with
    the "Running on <pod> via <manager>" line the Kubernetes executor writes.
    """

    def __init__(self, url, token, answers):
        super().__init__(daemon=True)
        self.url, self.token, self.answers = url, token, answers
        self.stopped = threading.Event()
        self.taken = []

    def run(self):
        while not self.stopped.is_set():
            status, body = call(self.url + "/api/v4/jobs/request", "POST", {"token": self.token})
            if status != 201:
                self.stopped.wait(0.2)
                continue
            job = json.loads(body)
            name = job["job_info"]["name"]
            self.taken.append(name)
            trace, state = self.answers.get(name, ("", "failed"))
            trace = "Running on runner-fake-%d via fake-manager...\n%s" % (job["id"], trace)
            headers = {"JOB-TOKEN": job["token"], "Content-Range": "0-%d" % (len(trace.encode()) - 1)}
            call(self.url + "/api/v4/jobs/%d/trace" % job["id"], "PATCH", trace.encode(), headers)
            call(self.url + "/api/v4/jobs/%d" % job["id"], "PUT",
                 {"token": job["token"], "state": state, "exit_code": 0 if state == "success" else 1},
                 {"JOB-TOKEN": job["token"]})

    def stop(self):
        self.stopped.set()
        self.join(timeout=5)
