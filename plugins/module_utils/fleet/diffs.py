# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Short diffs of what a converge would change, for people to read, with every secret hidden.

What a change list (``fleet/changes.py``) shows of an object or a release
values document that is not in place:

- one line per changed field, ``path: before -> after``, ``(unset)`` for a
  side that lacks it; a multi-line text (a config.toml) as its changed lines
  only, ``- old`` and ``+ new``;
- a value under a key that names a secret (``token``, ``password``,
  ``secret``, ``private_key``, ``credentials``, ...) as ``(hidden)``, and a
  Secret's ``data`` and ``stringData`` never, only which keys change;
- credentials written into a URL (``https://user:pass@host/``) as
  ``https://***@host/``, wherever a URL appears in a value;
- at most ``MAX_LINES`` lines per object and ``MAX_CHARS`` characters per
  value: the whole plan is what ``gpuci_plan_dir`` writes.

Equality follows the decider of each: an object's fields as
``pending_changes`` compares them (merge semantics: only the fields the
plan sets, an empty value as a missing one, a list whole), a release's
values as ``helm_releases.decide`` does (the whole document).
"""

from __future__ import annotations

import base64
import difflib
import json
import re

from ansible_collections.gpuci.runners.plugins.module_utils.common.url_credentials import masked_url

# A key whose value is a secret, wherever it appears in a document.
SECRET_KEY = re.compile(r"token|passw|secret|private[_-]?key|credential|api[_-]?key|auth[_-]?key|bearer",
                        re.IGNORECASE)
# A line of a text document that sets a key: `key = value`, `key: value`, `"key" = value`.
TEXT_SETTING = re.compile(r"^(\s*[\"']?)([\w.-]+)([\"']?\s*[=:]\s*)(.+)$")
HIDDEN = "(hidden)"
UNSET = "(unset)"
MAX_LINES = 12
MAX_CHARS = 80
# The API server omits empty fields: an empty value asked for is a missing one.
EMPTY = ({}, [], "", None)
_ABSENT = object()


def secret_key(key):
    return bool(SECRET_KEY.search(str(key)))


def masked(value):
    """A copy of ``value`` with every secret-named key's value hidden and every URL's credentials masked."""
    if isinstance(value, dict):
        return dict((k, HIDDEN if secret_key(k) else masked(v)) for k, v in value.items())
    if isinstance(value, list):
        return [masked(v) for v in value]
    if isinstance(value, str):
        return masked_url(value)
    return value


def holds(live, desired):
    """True when ``live`` holds every field ``desired`` sets (merge semantics, omitempty, a list item by item)."""
    if isinstance(desired, dict):
        return isinstance(live, dict) and all(holds(live[k], v) if k in live else v in EMPTY
                                              for k, v in desired.items())
    if isinstance(desired, list):
        # A list is replaced whole by a merge patch: same length, item by item.
        return isinstance(live, list) and len(live) == len(desired) and all(map(holds, live, desired))
    return live == desired and type(live) is type(desired)


def object_diff(desired, live):
    """The lines of the fields ``desired`` sets that ``live`` does not hold; of a Secret's data only the keys."""
    desired = dict(desired)
    if desired.get("kind") == "Secret":
        lines = _secret_data_diff(desired.pop("data", None) or {}, desired.pop("stringData", None) or {},
                                  (live or {}).get("data") or {})
        live = dict(live or {}, data=None, stringData=None)
    else:
        lines = []
    return shortened(_fields_diff(live, desired, "") + lines)


def values_diff(before, after):
    """The lines of what differs between two whole documents (a release's user values, deployed and wanted)."""
    return shortened(_values_diff(before, after, ""))


def labels_diff(current, patch):
    """The lines of a label patch (``None`` removes a label) against a node's current labels."""
    return shortened([_line("metadata.labels." + key, current.get(key, _ABSENT), _ABSENT if value is None else value)
                      for key, value in sorted(patch.items()) if current.get(key, _ABSENT) != value])


def shortened(lines):
    if len(lines) <= MAX_LINES:
        return lines
    return lines[:MAX_LINES - 1] + ["... and %d more lines (gpuci_plan_dir writes the whole plan)"
                                    % (len(lines) - MAX_LINES + 1)]


def _fields_diff(live, desired, path):
    if isinstance(desired, dict) and isinstance(live, dict):
        lines = []
        for key, value in desired.items():
            if key in live:
                lines += _fields_diff(live[key], value, _join(path, key))
            elif value not in EMPTY:
                lines.append(_line(_join(path, key), _ABSENT, value))
        return lines
    return [] if holds(live, desired) else [_line(path, live, desired)]


def _values_diff(before, after, path):
    if isinstance(before, dict) and isinstance(after, dict):
        lines = []
        for key in sorted(set(before) | set(after), key=str):
            lines += _values_diff(before.get(key, _ABSENT), after.get(key, _ABSENT), _join(path, key))
        return lines
    if before == after:
        return []
    if isinstance(before, str) and isinstance(after, str) and ("\n" in before or "\n" in after) \
            and not _secret_path(path):
        return _text_diff(path, before, after)
    return [_line(path, before, after)]


def _secret_data_diff(data, string_data, live_data):
    """Which keys of a Secret's data change, never their values (stringData compared as the data it becomes)."""
    wanted = dict(data, **dict((k, base64.b64encode(str(v).encode("utf-8")).decode("ascii"))
                               for k, v in string_data.items()))
    lines = []
    for key in sorted(wanted):
        if key not in live_data:
            # The API server omits an empty value: asking for one is asking for none.
            if wanted[key] not in EMPTY:
                lines.append("data.%s: %s -> %s" % (key, UNSET, HIDDEN))
        elif live_data[key] != wanted[key]:
            lines.append("data.%s: %s -> %s (changed)" % (key, HIDDEN, HIDDEN))
    return lines


def _text_diff(path, before, after):
    """A text's changed lines (difflib, no context), each a setting of a secret key hidden."""
    changed = [line for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
               if not line.startswith(("---", "+++", "@@"))]
    return ["%s:" % masked_url(path)] + ["  %s %s" % (line[0], _short(_masked_setting(line[1:]))) for line in changed]


def _masked_setting(text):
    match = TEXT_SETTING.match(text)
    if match and secret_key(match.group(2)):
        return match.group(1) + match.group(2) + match.group(3) + HIDDEN
    return masked_url(text)


def _line(path, before, after):
    if _secret_path(path):
        return "%s: %s -> %s" % (path, UNSET if before is _ABSENT else HIDDEN, UNSET if after is _ABSENT else HIDDEN)
    return "%s: %s -> %s" % (path, _shown(before), _shown(after))


def _secret_path(path):
    return any(secret_key(part) for part in path.split("."))


def _shown(value):
    if value is _ABSENT:
        return UNSET
    return _short(json.dumps(masked(value), sort_keys=True, default=str))


def _short(text):
    text = masked_url(text)
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS - 3] + "..."


def _join(path, key):
    return "%s.%s" % (path, key) if path else str(key)
