# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Laying a user's settings over the defaults: a pool's extra_config over its runner table, extra chart values.

One rule for every such overlay, so that a nested table the user names in
part keeps the default's other keys, whichever role renders it.
"""

from __future__ import annotations


def deep_merge(base, override):
    """Return ``base`` with ``override`` laid over it; nested tables merge, the rest replaces.

    Neither argument is changed; a list replaces the whole list (merging lists
    item by item would guess which items correspond).
    """
    result = dict(base)
    for key, value in override.items():
        if isinstance(value, dict) and isinstance(result.get(key), dict):
            result[key] = deep_merge(result[key], value)
        else:
            result[key] = value
    return result
