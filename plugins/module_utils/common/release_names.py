# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""How long a pool or scale set name may be, derived once from the limits behind it.

Each GitLab pool and each ARC scale set is one Helm release, and Helm refuses
release names longer than 53 characters (it appends suffixes to them in the
names of the release's Secrets, which are DNS subdomains of at most 63).
"""

from __future__ import annotations

import re

# Helm's own limit on a release name.
HELM_RELEASE_NAME_MAX = 53

# The gitlab_runner role names each release gitlab-runner-<pool> (roles/gitlab_runner/vars/main.yml,
# _gitlab_runner_release_prefix; tests/roles checks that the two agree), so a pool name
# has 53 - 14 = 39 characters.
GITLAB_RELEASE_PREFIX = "gitlab-runner-"
GITLAB_POOL_NAME_MAX = HELM_RELEASE_NAME_MAX - len(GITLAB_RELEASE_PREFIX)

# The arc_runners role names each release after its scale set (no prefix: 53), but the
# gha-runner-scale-set chart refuses scale set names over 45 characters itself
# (templates/autoscalingrunnerset.yaml: "Name must have up to 45 characters"), so 45 wins.
ARC_RELEASE_PREFIX = ""
ARC_CHART_SCALE_SET_NAME_MAX = 45
ARC_SCALE_SET_NAME_MAX = min(HELM_RELEASE_NAME_MAX - len(ARC_RELEASE_PREFIX), ARC_CHART_SCALE_SET_NAME_MAX)

# A Kubernetes namespace (and any other DNS label): RFC 1123, at most 63 characters.
DNS_LABEL_MAX = 63
# A Kubernetes label value (non-empty here: the fleet label must name something).
_LABEL_VALUE = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?")


def is_dns_label(value, maximum=DNS_LABEL_MAX):
    """True when ``value`` is a lower-case RFC 1123 label of at most ``maximum`` characters."""
    return (
        isinstance(value, str)
        and 0 < len(value) <= maximum
        and re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", value) is not None
    )


def is_label_value(value):
    """True when ``value`` is a non-empty Kubernetes label value (at most 63 characters)."""
    return isinstance(value, str) and _LABEL_VALUE.fullmatch(value) is not None
