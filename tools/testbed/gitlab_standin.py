# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A STAND-IN for GitLab's runner API, for the testbed's real node. Not GitLab.

GitLab itself is out of reach here. The real gitlab-runner managers on the
testbed's real node talk to this instead: it serves the documented subset of
the runner API (https://docs.gitlab.com/api/runners/ and the jobs endpoints a
runner polls) that a registered runner uses while no job is queued:

    POST /api/v4/runners/verify   a `glrt-` authentication token -> 200 (else 403)
    POST /api/v4/jobs/request     -> 204 No Content: no job for you (yet)

Every request is appended to a JSON-lines record (--record) with the endpoint,
the time and a SHA-256 prefix of the token (never the token), so tests can
tell which token a runner used without the token being written anywhere.

    gitlab_standin.py --listen 10.89.0.1:18880 --record FILE
"""
from __future__ import annotations

import argparse
import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

TOKEN_PREFIX = "glrt-"


def token_fingerprint(token: str) -> str:
    """What the record keeps of a token: enough to tell two apart, nothing to reuse."""
    return hashlib.sha256(token.encode()).hexdigest()[:16]


def runner_id(token: str) -> int:
    """A stable runner id per token, as GitLab would keep one per runner."""
    return int(token_fingerprint(token)[:6], 16)


class StandIn(BaseHTTPRequestHandler):
    server_version = "gpuci-gitlab-standin/1"
    record: Path
    lock = threading.Lock()

    def _body(self) -> dict:
        length = int(self.headers.get("Content-Length") or 0)
        try:
            return json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            return {}

    def _reply(self, status: int, payload: dict | None = None) -> None:
        data = json.dumps(payload).encode() if payload is not None else b""
        self.send_response(status)
        if payload is not None:
            self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _note(self, endpoint: str, token: str, status: int) -> None:
        line = json.dumps({"time": time.time(), "endpoint": endpoint, "status": status,
                           "token_sha256": token_fingerprint(token) if token else None})
        with self.lock, self.record.open("a") as handle:
            handle.write(line + "\n")

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = self._body()
        token = str(body.get("token", ""))
        known = token.startswith(TOKEN_PREFIX)
        if self.path == "/api/v4/runners/verify":
            status = 200 if known else 403
            payload = {"id": runner_id(token), "token": token, "token_expires_at": None} if known else None
        elif self.path == "/api/v4/jobs/request":
            status = 204 if known else 403
            payload = None
        else:
            status = 404
            payload = {"message": "404 Not Found (gpuci GitLab stand-in)"}
        if status == 403:
            payload = {"message": "403 Forbidden"}
        # Recorded before the answer, so the record's order is the order of requests.
        self._note(self.path, token, status)
        self._reply(status, payload)

    def log_message(self, format, *args):  # noqa: A002 (http.server's signature)
        """Requests go to the record, which has no tokens; nothing else is printed."""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--listen", required=True, help="HOST:PORT")
    parser.add_argument("--record", required=True, type=Path)
    args = parser.parse_args()
    host, port = args.listen.rsplit(":", 1)
    StandIn.record = args.record
    ThreadingHTTPServer((host, int(port)), StandIn).serve_forever()


if __name__ == "__main__":
    main()
