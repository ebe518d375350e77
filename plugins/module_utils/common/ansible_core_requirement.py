# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Whether the running ansible-core meets the collection's ``requires_ansible`` (meta/runtime.yml).

``requires_ansible`` is a PEP 440 specifier set, such as ``>=2.19.0`` or
``>=2.19.0,<2.21``; each clause is checked. Pre-release and local suffixes
of the running version (``2.20.0rc1``, ``2.19.3.post1``) compare by their
release numbers, which is all a requirement on ansible-core needs.
"""

from __future__ import annotations

import operator
import re

from ansible_collections.gpuci.runners.plugins.module_utils.common.validation import ValidationError, require_mapping

_CLAUSE = re.compile(r"^\s*(>=|<=|==|!=|>|<)\s*([0-9]+(?:\.[0-9]+)*)\s*$")
_COMPARE = {">=": operator.ge, "<=": operator.le, "==": operator.eq, "!=": operator.ne,
            ">": operator.gt, "<": operator.lt}


def _release(version, path="running"):
    """``(2, 19, 14)`` from ``2.19.14`` (trailing suffixes ignored), zero-padded by the caller."""
    match = re.match(r"^\s*([0-9]+(?:\.[0-9]+)*)", str(version))
    if not match:
        raise ValidationError(path, "is not a version", version)
    return tuple(int(part) for part in match.group(1).split("."))


def _padded(left, right):
    width = max(len(left), len(right))
    return left + (0,) * (width - len(left)), right + (0,) * (width - len(right))


def ansible_core_requirement(spec):
    """``{required, running, problem}``: ``problem`` is empty when ``running`` meets ``requires_ansible``.

    ``spec`` holds ``requires_ansible`` (from meta/runtime.yml) and
    ``running``, the controller's ansible-core version (``ansible_version.full``).
    """
    require_mapping(spec, "ansible_core_requirement")
    required, running = str(spec.get("requires_ansible") or "").strip(), spec.get("running")
    if not required:
        raise ValidationError("requires_ansible", "meta/runtime.yml must name the ansible-core versions supported")
    current = _release(running)
    for clause in required.split(","):
        match = _CLAUSE.match(clause)
        if not match:
            raise ValidationError("requires_ansible", "each clause must be an operator and a version", required)
        symbol, bound = match.groups()
        if not _COMPARE[symbol](*_padded(current, _release(bound, "requires_ansible"))):
            return {"required": required, "running": str(running),
                    "problem": "gpuci.runners needs ansible-core %s; this controller runs %s." % (required, running)}
    return {"required": required, "running": str(running), "problem": ""}
