# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The leak checks' one answer (tests/integration/secret_forms.py): a secret in every form a leak takes."""
import base64
import json
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from secret_forms import forms_found, leaks, secret_forms  # noqa: E402

TOKEN = "glrt-FORMS-0123456789abcdef"
MARKER = "FORMS-PEM-0123456789ab"


def _secret_object(values):
    """A Secret as the API server answers it (kubectl get -o json, a deletion's result at -v)."""
    return json.dumps({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "t"},
                       "data": {key: base64.b64encode(value.encode()).decode() for key, value in values.items()}})


def test_a_secret_is_found_plain_and_json_escaped():
    assert forms_found("token = %s\n" % TOKEN, TOKEN) == ["plain"]
    key = "-----BEGIN KEY-----\n%s\n-----END KEY-----\n" % MARKER
    assert forms_found(json.dumps({"github_app_private_key": key}), key) == ["plain"]


def test_a_secret_is_found_in_a_secrets_data_as_kubernetes_shows_it():
    assert forms_found(_secret_object({"runner-token": TOKEN}), TOKEN) == ["base64"]
    assert TOKEN not in _secret_object({"runner-token": TOKEN})


@pytest.mark.parametrize("before", ["", "a", "ab", "abc", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA"])
def test_a_secret_inside_a_larger_value_is_found_at_every_offset(before):
    value = before + MARKER + "\n-----END RSA PRIVATE KEY-----\n"
    assert forms_found(_secret_object({"github_app_private_key": value}), MARKER) == ["base64"]


def test_wrapped_and_url_safe_base64_are_found():
    secret = "ghp_FORMS?>~~??" + "x" * 20  # bytes whose base64 holds + and /, which the URL-safe alphabet changes
    standard, url_safe = (base64.b64encode(secret.encode()).decode(), base64.urlsafe_b64encode(secret.encode()).decode())
    assert standard != url_safe
    assert forms_found("\n".join(textwrap.wrap(standard, 8)), secret) == ["base64"]
    assert forms_found(yaml.safe_dump({"data": "\\n".join(textwrap.wrap(standard, 8))}), secret) == ["base64"]
    assert forms_found("jwt: " + url_safe, secret) == ["base64url"]


def test_text_without_the_secret_holds_no_form_of_it():
    others = _secret_object({"token": TOKEN.replace("0123", "9999")}) + "glrt-FORMS-" + base64.b64encode(b"other").decode()
    assert forms_found(others, TOKEN) == []
    assert leaks({"site.yml -v": others}, [TOKEN]) == []


def test_leaks_name_where_which_secret_and_how_never_the_whole_secret():
    found = leaks({"teardown -v": "ok: " + _secret_object({"t": TOKEN}), "site -v": "clean"}, [TOKEN, MARKER])
    assert found == ["teardown -v: glrt-F... as base64"]
    assert TOKEN not in found[0]
    assert leaks("plain %s" % MARKER, [MARKER]) == ["text: FORMS-... as plain"]


def test_a_short_secret_is_refused_since_it_would_be_found_by_chance():
    with pytest.raises(ValueError, match="fewer than 8"):
        leaks("anything", ["abc"])


def test_each_form_has_strings_long_enough_to_mean_something():
    forms = secret_forms(TOKEN)
    assert forms["plain"] and len(forms["base64"]) == 3
    for form, needles in forms.items():
        assert all(len(needle) >= len(TOKEN) - 3 for needle in needles), form
    # Its base64 holds no + or /: the URL-safe alphabet writes it the same, so that form adds nothing.
    assert forms["base64url"] == []
