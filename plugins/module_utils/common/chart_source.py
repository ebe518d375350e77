# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Where a role's charts come from: a pinned version from an http(s):// or oci:// repository, or a local chart.

Each cluster role exposes ``<role>_chart_version``, ``<role>_chart_repo_url``
and ``<role>_chart_path``; its plan checks them here when it plans a release
to install, so the error names the role's own variable before anything
changes, and a component the inventory does not declare is not checked.
"""

from __future__ import annotations

import re

from ansible_collections.gpuci.runners.plugins.module_utils.common.url_credentials import masked_url
from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError

# A pinned version: Helm would read anything looser (0.14.x, ^1.2, latest) as a range or fail late.
PINNED_VERSION = re.compile(r"^v?[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$")
REPO_URL = re.compile(r"^(https?|oci)://[^/\s]+")


def check_chart_source(prefix, settings):
    """Raise naming ``<prefix>_chart_version`` or ``<prefix>_chart_repo_url``; a local chart needs neither."""
    if settings.get(prefix + "_chart_path"):
        return
    version, repo_url = settings.get(prefix + "_chart_version"), settings.get(prefix + "_chart_repo_url")
    unless = "unless %s_chart_path names a local chart" % prefix
    if not PINNED_VERSION.match(str(version or "")):
        raise ValidationError(prefix + "_chart_version",
                              "must be a pinned chart version such as 1.2.3 or v1.2.3, %s" % unless, version)
    if not REPO_URL.match(str(repo_url or "")):
        # Shown with its credentials masked: a URL refused for its scheme may still carry a password.
        raise ValidationError(prefix + "_chart_repo_url", "must be an http(s):// or oci:// URL, %s" % unless,
                              masked_url(repo_url) if repo_url else repo_url)
