# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Deterministic text renderings (JSON, TOML, YAML) of plain data.

The TOML and YAML libraries are imported when first needed, so importing
module_utils never fails on a host that lacks them; the error then says
which package to install.
"""

from __future__ import annotations

import json


class MissingLibraryError(RuntimeError):
    """A Python package needed for rendering is not installed on the controller."""


def to_json(data):
    """Compact JSON with sorted keys, stable from run to run."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def sorted_tree(data):
    """Return ``data`` with every mapping's keys in sorted order."""
    if isinstance(data, dict):
        return dict((key, sorted_tree(data[key])) for key in sorted(data))
    if isinstance(data, list):
        return [sorted_tree(element) for element in data]
    return data


def to_toml(data):
    try:
        import tomli_w
    except ImportError:
        raise MissingLibraryError(
            "rendering config.toml needs the Python package tomli-w on the controller (pip install tomli-w)"
        )
    return tomli_w.dumps(sorted_tree(data))


def to_yaml(data):
    try:
        import yaml
    except ImportError:
        raise MissingLibraryError("rendering YAML needs the Python package PyYAML on the controller (pip install PyYAML)")
    return yaml.safe_dump(data, default_flow_style=False, sort_keys=True)
