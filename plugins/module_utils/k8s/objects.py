# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Read the metadata of Kubernetes objects as the API (or a recorded answer) returns them.

Objects read back from a cluster may lack any part of their metadata (a
recorded answer in a test, an object being deleted), so every reader takes
an absent part as empty rather than failing on it.
"""

from __future__ import annotations


def metadata(obj):
    """The object's ``metadata``; ``{}`` where it has none."""
    return (obj or {}).get("metadata") or {}


def object_name(obj):
    """The object's ``metadata.name`` as text; ``""`` where it has none."""
    return str(metadata(obj).get("name", ""))
