# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Many k8s_info reads in one module run (plugins/modules/k8s_reads.py).

Each read is answered by kubernetes.core's own ``K8sService.find``, the
function behind ``kubernetes.core.k8s_info``, so a read here means exactly
what the same options mean there (selectors, waiting, hidden fields, a kind
the API server does not serve). Only the process is shared.
"""

from __future__ import annotations


def duplicate_keys(reads):
    """The keys used by more than one read, sorted: each answer needs its own key."""
    seen, doubled = set(), set()
    for read in reads:
        (doubled if read["key"] in seen else seen).add(read["key"])
    return sorted(doubled)


def read_all(find, reads):
    """Answer each read with ``find`` (K8sService.find); ``{key: k8s_info's result}`` in the reads' order.

    ``find`` raises on an API error, as k8s_info fails; the answers read
    before it are of no use to a caller that must then stop.
    """
    answers = {}
    for read in reads:
        answers[read["key"]] = find(
            read["kind"], read["api_version"],
            name=read.get("name"), namespace=read.get("namespace"),
            label_selectors=read.get("label_selectors") or [], field_selectors=read.get("field_selectors") or [],
            wait=bool(read.get("wait")), wait_sleep=read.get("wait_sleep") or 5,
            wait_timeout=read.get("wait_timeout") or 120, condition=read.get("wait_condition"),
            hidden_fields=read.get("hidden_fields"))
    return answers
