# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The labels on every object the collection makes itself, in one place.

Teardown and pruning find the collection's objects by these labels, so every
role must write exactly the same set; a role adds its own labels (component,
fleet, pool) on top.
"""

from __future__ import annotations

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError, check_str_map

OWNERSHIP_LABELS = {
    "app.kubernetes.io/part-of": "gpuci-runners",
    "app.kubernetes.io/managed-by": "gpuci.runners",
}


def ownership_labels(extra=None):
    """The collection's labels with ``extra`` (a role's own labels) on top; ``extra`` cannot replace them."""
    extra = dict(extra or {})
    check_str_map(extra, "ownership_labels")
    clashes = sorted(set(extra) & set(OWNERSHIP_LABELS))
    if clashes:
        raise ValidationError("ownership_labels", "cannot replace the collection's own labels", clashes)
    return {**OWNERSHIP_LABELS, **extra}


def label_selectors(labels):
    """``["key=value", ...]``, one equality selector per label, in the labels' order (as k8s_info takes them)."""
    return ["%s=%s" % item for item in labels.items()]


def label_selector(labels):
    """``key=value,...`` for a label selector, in the labels' order."""
    return ",".join(label_selectors(labels))


def set_selector(label, values):
    """``label in (a,b)``: objects whose ``label`` is any of ``values``."""
    return "%s in (%s)" % (label, ",".join(values))


def labels_match(labels, wanted):
    """Whether ``labels`` carry every label of ``wanted`` (any mappings; Ansible hands filters its own)."""
    return all(labels.get(key) == value for key, value in wanted.items())
