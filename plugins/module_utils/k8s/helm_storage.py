# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Helm's release storage Secrets, read as the releases they hold (``k8s_reads``' ``helm_releases`` option).

Helm keeps each revision of a release in a Secret of type
``helm.sh/release.v1`` (its default storage driver): base64 (the API's) of
base64 (Helm's) of gzipped JSON holding the whole release, the chart's
templates and CRDs included. A chart with CRDs makes that megabytes (the ARC
controller's: 1.1 MB on the testbed), while the roles decide from five
fields. Decoding them in the module run that reads them keeps those
megabytes out of the controller, which would otherwise parse them and carry
them through every task that reads the answer.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import json

RELEASE_SECRET_TYPE = "helm.sh/release.v1"
RELEASE_KEY = "release"
_GZIP_MAGIC = b"\x1f\x8b"


def stored_release(secret):
    """``{name, namespace, version, status, chart, config}`` of the revision a storage Secret holds.

    ``chart`` is ``<name>-<version>`` as ``helm list`` shows it, ``config``
    the user values. None for a Secret that is not Helm's or cannot be
    decoded: its release then counts as not found.
    """
    if secret.get("type") != RELEASE_SECRET_TYPE:
        return None
    try:
        payload = base64.b64decode(base64.b64decode((secret.get("data") or {})[RELEASE_KEY]))
        if payload[:2] == _GZIP_MAGIC:
            payload = gzip.decompress(payload)
        release = json.loads(payload)
    except (KeyError, TypeError, ValueError, binascii.Error, OSError):
        return None
    if not isinstance(release, dict):
        return None
    metadata = (release.get("chart") or {}).get("metadata") or {}
    return {"name": release.get("name"), "namespace": release.get("namespace"),
            "version": release.get("version", 0), "status": (release.get("info") or {}).get("status", ""),
            "chart": "%s-%s" % (metadata.get("name", ""), metadata.get("version", "")),
            "config": release.get("config") or {}}
