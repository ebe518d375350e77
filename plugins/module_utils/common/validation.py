# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Input checks shared by the builders.

Every check names the field by its path (``pool.tolerations[1].effect``) and
shows the value it received, so a user can find the typo in the inventory.
The helpers return plain Python copies (``dict``, ``list``, ``str``, ``int``):
Ansible hands filters its own str/dict subclasses, which YAML and TOML
writers do not know how to serialise, and copies keep the inputs untouched.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fractions import Fraction

_MISSING = object()


class ValidationError(ValueError):
    """A bad input value, with the path of the field that holds it."""

    def __init__(self, path, reason, value=_MISSING):
        self.path = path
        self.reason = reason
        self.value = value
        text = "%s: %s" % (path, reason)
        if value is not _MISSING:
            text += " (got %s)" % show(value)
        super(ValidationError, self).__init__(text)


def show(value):
    """Render a received value for an error message, the way Python shows it."""
    return repr(plain(value))


def plain(value):
    """Deep-copy ``value`` into builtin types (no Ansible subclasses)."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, Mapping):
        return dict((plain(k), plain(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    return value


def type_name(value):
    return type(plain(value)).__name__


def child(path, key):
    return "%s.%s" % (path, key)


def item(path, index):
    return "%s[%d]" % (path, index)


def require_mapping(value, path):
    if not isinstance(value, Mapping):
        raise ValidationError(path, "must be a mapping, not %s" % type_name(value), value)
    return value


def reject_unknown_keys(mapping, known, path, renamed=None):
    """Refuse keys outside ``known`` so that typos fail instead of being ignored.

    ``renamed`` maps keys that are no longer read to their new names, so an
    inventory written for an older version is told what to write instead.
    The value is not shown: a misspelt ``token`` must not end up in a log.
    """
    for key in sorted(mapping, key=str):
        if key in (renamed or {}):
            raise ValidationError(child(path, key), "was renamed %s; set %s instead (same values)"
                                  % (renamed[key], child(path, renamed[key])))
        if key not in known:
            raise ValidationError(child(path, key), "unknown key; known keys: %s" % ", ".join(sorted(known)))


def optional_str(mapping, key, path, default=None, allow_empty=False):
    value = mapping.get(key)
    if value is None:
        return default
    if not isinstance(value, str):
        raise ValidationError(child(path, key), "must be a string, not %s" % type_name(value), value)
    if not value and not allow_empty:
        raise ValidationError(child(path, key), "must not be empty", value)
    return str(value)


def optional_secret(mapping, key, path):
    """Like optional_str, but errors never show the value."""
    value = mapping.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise ValidationError(child(path, key), "must be a non-empty string (value not shown: it is a secret)")


def required_str(mapping, key, path):
    if mapping.get(key) is None:
        raise ValidationError(child(path, key), "is required")
    return optional_str(mapping, key, path)


def optional_choice(mapping, key, path, choices, default=None):
    value = optional_str(mapping, key, path, default=default)
    if value is not None and value not in choices:
        raise ValidationError(child(path, key), "must be one of %s" % ", ".join(choices), value)
    return value


def check_int(value, path, minimum=None):
    # bool is a subclass of int, but `gpus: true` is a mistake, not a count.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValidationError(path, "must be an integer, not %s" % type_name(value), value)
    if minimum is not None and value < minimum:
        raise ValidationError(path, "must be an integer >= %d" % minimum, value)
    return int(value)


def setting_int(value):
    """A role variable's integer as Ansible's ``int`` type takes it, or None.

    ``-e name=7`` hands a role the string ``"7"``; the role's argument spec
    (type int) accepts it but leaves the variable a string, so a plan reads
    a string of digits as the integer it names. A bool is no count.
    """
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    text = value.strip() if isinstance(value, str) else ""
    return int(text) if text.lstrip("-").isdigit() else None


def optional_int(mapping, key, path, default=None, minimum=None):
    value = mapping.get(key)
    if value is None:
        return default
    return check_int(value, child(path, key), minimum)


def optional_bool(mapping, key, path, default=False):
    value = mapping.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ValidationError(child(path, key), "must be true or false, not %s" % type_name(value), value)
    return value


def optional_mapping(mapping, key, path):
    value = mapping.get(key)
    if value is None:
        return {}
    return plain(require_mapping(value, child(path, key)))


def check_str_list(value, path):
    if not isinstance(value, (list, tuple)):
        raise ValidationError(path, "must be a list of strings, not %s" % type_name(value), value)
    for index, element in enumerate(value):
        if not isinstance(element, str) or not element:
            raise ValidationError(item(path, index), "must be a non-empty string", element)
    return [str(element) for element in value]


def optional_str_list(mapping, key, path):
    value = mapping.get(key)
    if value is None:
        return []
    return check_str_list(value, child(path, key))


def check_str_map(value, path):
    """A mapping of string to string, such as Kubernetes labels."""
    require_mapping(value, path)
    result = {}
    for key in sorted(value, key=str):
        if not isinstance(key, str) or not key:
            raise ValidationError(path, "keys must be non-empty strings", key)
        element = value[key]
        if not isinstance(element, str):
            # Kubernetes label values are strings; YAML turns bare `true` into a bool.
            raise ValidationError(
                child(path, key), "must be a string (quote it in YAML), not %s" % type_name(element), element
            )
        result[str(key)] = str(element)
    return result


def optional_str_map(mapping, key, path):
    value = mapping.get(key)
    if value is None:
        return {}
    return check_str_map(value, child(path, key))


# Kubernetes' quantity grammar (k8s.io/apimachinery pkg/api/resource/quantity.go):
#   <quantity> ::= <signedNumber><suffix>;  <number> ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
#   <suffix>   ::= <binarySI> | <decimalExponent> | <decimalSI>
#   <binarySI> ::= Ki | Mi | Gi | Ti | Pi | Ei;  <decimalSI> ::= n | u | m | "" | k | M | G | T | P | E
#   <decimalExponent> ::= e<signed integer> | E<signed integer>  (the parser reads the exponent as an integer)
# So 1k is 1000 and 1Ki 1024, while K, KB, GB and mi are no suffix at all: GitLab Runner and the API server
# refuse them when they parse the job pod, long after the inventory was read. The parser itself takes a
# bare sign or dot as zero; the grammar, and this check, do not.
_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<number>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<binary>[KMGTPE]i)|[eE](?P<exponent>[+-]?[0-9]+)|(?P<decimal>[numkMGTPE]?))\Z"
)
_DECIMAL_SI = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY_SI = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
QUANTITY_EXAMPLES = "e.g. 8Gi, 8G, 512Mi, 500m, 2"


def quantity_value(text):
    """The exact value of the Kubernetes quantity ``text`` (a ``Fraction``), or None when ``text`` is not one."""
    match = _QUANTITY.match(text) if isinstance(text, str) else None
    if match is None:
        return None
    value = Fraction(match.group("number"))
    if match.group("binary"):
        value *= 2 ** _BINARY_SI[match.group("binary")]
    else:
        exponent = int(match.group("exponent")) if match.group("exponent") is not None \
            else _DECIMAL_SI[match.group("decimal") or ""]
        value *= Fraction(10) ** exponent
    return -value if match.group("sign") == "-" else value


def check_quantity(mapping, key, path):
    """A non-negative Kubernetes quantity such as ``2``, ``0.5`` or ``"500m"``; returned as a string (None: unset).

    YAML numbers are taken as the quantities they spell (``cpu_request: 0.5`` is ``"0.5"``); ``true``,
    ``""``, ``8GB`` or ``-1`` is refused naming ``path.key``, with examples of what Kubernetes takes.
    """
    value = mapping.get(key)
    if value is None:
        return None
    where = child(path, key)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ValidationError(where, "must be a Kubernetes quantity (%s), not %s" % (QUANTITY_EXAMPLES, type_name(value)),
                              value)
    text = repr(float(value)) if isinstance(value, float) else str(value)
    number = quantity_value(text)
    if number is None:
        raise ValidationError(where, "is not a Kubernetes quantity (%s)" % QUANTITY_EXAMPLES, value)
    if number < 0:
        raise ValidationError(where, "must not be negative", value)
    return text


def check_request_within_limit(request, request_path, limit, limit_path):
    """Refuse a request above its limit (both checked quantities; None: unset): Kubernetes refuses such a pod."""
    if request is not None and limit is not None and quantity_value(request) > quantity_value(limit):
        raise ValidationError(request_path, "must not exceed %s (%s): Kubernetes refuses a container whose request "
                              "is above its limit" % (limit_path, limit), request)


def check_resources(value, path, keys=("requests", "limits")):
    """Kubernetes ResourceRequirements (``requests``, ``limits``: resource name -> quantity), as a plain copy.

    Each quantity is checked, and each request against the limit of the same resource; keys outside
    ``keys`` are refused.
    """
    require_mapping(value, path)
    reject_unknown_keys(value, keys, path)
    result = {}
    for key in ("requests", "limits"):
        if value.get(key) is None:
            continue
        amounts = require_mapping(value[key], child(path, key))
        result[key] = dict((str(name), check_quantity(amounts, name, child(path, key)))
                           for name in sorted(amounts, key=str))
    for name, request in sorted((result.get("requests") or {}).items()):
        check_request_within_limit(request, child(child(path, "requests"), name),
                                   (result.get("limits") or {}).get(name), child(child(path, "limits"), name))
    return result


# A Go duration (5m, 1h30m, 90s), which some users write where the collection wants seconds.
_DURATION = re.compile(r"(?:([0-9]+)h)?(?:([0-9]+)m)?(?:([0-9]+)s)?\Z")


def check_seconds(settings, name, minimum=1):
    """The role variable ``name`` as a whole number of seconds >= ``minimum``; raises naming it otherwise.

    Read as Ansible's ``int`` type takes it (``-e name=600`` gives the string ``"600"``). A Go duration
    such as ``5m`` is answered with the seconds it means, so the user sees what to write.
    """
    value = settings.get(name)
    number = setting_int(value)
    if number is not None and number >= minimum:
        return number
    reason = "must be a whole number of seconds >= %d, such as 600" % minimum
    duration = _DURATION.match(value.strip()) if isinstance(value, str) and value.strip() else None
    if duration and any(duration.groups()):
        hours, minutes, seconds = (int(part or 0) for part in duration.groups())
        reason += "; for %s write %d" % (value.strip(), hours * 3600 + minutes * 60 + seconds)
    raise ValidationError(name, reason, value)


def seconds_problems(settings, name, minimum=1):
    """``check_seconds``' problem as a list (``[]`` when ``name`` is a number of seconds)."""
    return problems_of(check_seconds, settings, name, minimum)


def named_item(path, entry, index):
    """``path[name=NAME]`` for a list entry with a usable name (as the user finds it), else ``path[INDEX]``."""
    name = entry.get("name") if isinstance(entry, Mapping) else None
    if isinstance(name, str) and name:
        return "%s[name=%s]" % (path, name)
    return item(path, index)


def rendered_present_entries(entries, key, render):
    """Each entry to be present (``state`` missing or present) made by ``render(entry, path)``, and the problem of
    each that cannot be made; both by index in ``entries``, ``path`` naming the entry as the inventory does
    (``key[name=x]``). What one rendering checks is then checked once, and its result kept.
    """
    rendered, problems = {}, {}
    for index, entry in enumerate(entries):
        if entry.get("state") not in (None, "present"):
            continue
        try:
            rendered[index] = render(entry, named_item(key, entry, index))
        except ValidationError as error:
            problems[index] = str(error)
    return rendered, problems


def problems_of(check, *args):
    """``check(*args)``'s error as a list of problems (``[]`` when it passes): the raising checks above, for
    checks that report every problem at once."""
    try:
        check(*args)
    except ValidationError as error:
        return [str(error)]
    return []


def problem(path, reason, *value):
    """One problem as text, for checks that report all problems at once: ``path: reason (got value)``."""
    return str(ValidationError(path, reason, *value))


def object_list(value, path):
    """``value`` (None: []) as a list of mappings (Kubernetes objects, loop results), as plain copies."""
    if value is None:
        return []
    if not isinstance(value, (list, tuple)):
        raise ValidationError(path, "must be a list, not %s" % type_name(value))
    for index, entry in enumerate(value):
        # Not shown: an entry may be a Secret's data that lost its object.
        if not isinstance(entry, Mapping):
            raise ValidationError(item(path, index), "must be a mapping, not %s" % type_name(entry))
    return plain(list(value))


def mapping_list(settings, key):
    """``settings[key]`` (missing: []) as a list of mappings; raises naming ``key[index]`` otherwise."""
    entries = settings.get(key) or []
    if not isinstance(entries, (list, tuple)):
        raise ValidationError(key, "must be a list, not %s" % type_name(entries))
    for index, entry in enumerate(entries):
        require_mapping(entry, item(key, index))
    return entries
