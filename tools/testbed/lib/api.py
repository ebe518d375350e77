# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A minimal client for the testbed's own calls to the API server (stdlib only)."""
from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request

from .layout import Layout


class ApiClient:
    def __init__(self, layout: Layout):
        self.base = layout.apiserver_url
        self.token = (layout.pki / "admin.token").read_text().strip()
        self.context = ssl.create_default_context(cafile=str(layout.pki / "ca.crt"))

    def request(self, method: str, path: str, body: dict | None = None, timeout: float = 10,
                content_type: str = "application/json"):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method, headers={
            "Authorization": f"Bearer {self.token}",
            "Content-Type": content_type,
            "Accept": "application/json",
        })
        with urllib.request.urlopen(req, context=self.context, timeout=timeout) as resp:
            text = resp.read().decode()
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text

    def get(self, path: str):
        return self.request("GET", path)

    def merge_patch(self, path: str, body: dict):
        return self.request("PATCH", path, body, content_type="application/merge-patch+json")

    def healthy(self, path: str = "/readyz") -> bool:
        try:
            return self.request("GET", path, timeout=3) == "ok"
        except (urllib.error.URLError, OSError, ConnectionError):
            return False
