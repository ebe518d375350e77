# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Credentials written into a URL (``https://user:pass@host/``), masked wherever a URL is shown.

One rule for every message, plan and diff that may quote a URL the user
wrote: a chart repository's, a GitLab's, a refused value's.
"""

from __future__ import annotations

import re

# The user-information part of a URL: scheme://user:password@host.
URL_CREDENTIALS = re.compile(r"([a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s\"']+@")


def masked_url(text):
    """``text`` with the credentials of every URL in it replaced by ``***``."""
    return URL_CREDENTIALS.sub(r"\1***@", str(text))


def carries_credentials(value):
    """True when a URL with credentials appears anywhere in ``value`` (a string, or dicts and lists of them)."""
    if isinstance(value, dict):
        return any(carries_credentials(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(carries_credentials(v) for v in value)
    return isinstance(value, str) and bool(URL_CREDENTIALS.search(value))
