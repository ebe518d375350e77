# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Does this text hold this secret, in any form a leak takes? The leak checks' one answer.

A secret leaks as typed, and also as Kubernetes keeps it: a Secret's data
is base64, so a deleted Secret returned by the API server, a ``kubectl get
-o yaml`` or a module result at -v shows the token only encoded. The value
encoded is often larger than the secret (a PEM key holding a marker, a
config.toml holding a token), so the secret may start at any of the three
byte offsets of a base64 group; each offset encodes it differently. The
forms looked for:

- ``plain``: the secret as it is, and JSON-escaped (a key's newlines as ``\\n``);
- ``base64``: standard base64 (RFC 4648, the alphabet Kubernetes writes a
  Secret's data in), at each offset, the characters that depend on the
  secret alone;
- ``base64url``: the same in the URL-safe alphabet (JWTs, some clients).

Base64 is also looked for in the text with its line breaks removed (real
and escaped ones), since ``base64`` and PEM tools wrap their lines. Stdlib
only: the unit tests (tests/unit/test_secret_forms.py) and every tier's
leak check import it.
"""
from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterable, Mapping

# Line breaks a wrapped base64 text may hold, real or as JSON and YAML escape them.
_BREAKS = re.compile(r"\s+|\\[nr]")
# Shown of a secret in a failure: enough to tell which one, not enough to use it.
SHOWN_CHARACTERS = 6


def _encoded_at_each_offset(data: bytes, encode) -> list[str]:
    """``data``'s base64 at byte offsets 0, 1 and 2 of a group: only the characters no other byte changes."""
    cores = []
    for offset in range(3):
        encoded = encode(b"\0" * offset + data).decode("ascii")
        # The characters that also hold bits of the bytes before (offset 1: one,
        # offset 2: two) or after (the group's last bits) the secret.
        start = {0: 0, 1: 2, 2: 3}[offset]
        end = (8 * (offset + len(data))) // 6
        cores.append(encoded[start:end])
    return cores


def secret_forms(secret: str) -> dict[str, list[str]]:
    """Each form's name and the strings that show ``secret`` in that form (none for base64url when alike)."""
    data = secret.encode("utf-8")
    plain = list(dict.fromkeys([secret, json.dumps(secret)[1:-1]]))
    standard = _encoded_at_each_offset(data, base64.b64encode)
    # Where the secret's base64 holds neither + nor /, both alphabets write it alike: one form, base64.
    url_safe = [core for core in _encoded_at_each_offset(data, base64.urlsafe_b64encode) if core not in standard]
    return {"plain": plain, "base64": standard, "base64url": url_safe}


def forms_found(text: str, secret: str) -> list[str]:
    """The names of the forms in which ``text`` holds ``secret``; [] when it holds none."""
    unwrapped = _BREAKS.sub("", text)
    found = []
    for form, needles in secret_forms(secret).items():
        haystacks = (text,) if form == "plain" else (text, unwrapped)
        if any(needle and needle in haystack for needle in needles for haystack in haystacks):
            found.append(form)
    return found


def shown(secret: str) -> str:
    """How a failure names a secret: its first characters."""
    return secret[:SHOWN_CHARACTERS] + "..."


def leaks(texts: Mapping[str, str] | str, secrets: Iterable[str]) -> list[str]:
    """Every leak of a secret in the texts, as ``"<where>: <secret's first characters> as <forms>"``.

    ``texts`` names each text (an output, a file, a record), or is one text
    (named ``text``). Empty when no text holds any secret in any form.
    """
    named = {"text": texts} if isinstance(texts, str) else texts
    secrets = list(secrets)
    if any(len(secret) < 8 for secret in secrets):
        raise ValueError("a secret of fewer than 8 characters would be found by chance: use real ones")
    return ["%s: %s as %s" % (where, shown(secret), ", ".join(forms))
            for where, text in named.items() for secret in secrets
            for forms in [forms_found(text, secret)] if forms]
