# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The deprecation policy (docs/deprecation.md), held over the argument specs, the Python tables and the changelog.

- every deprecated role option (``removed_in_version``) or alias (``deprecated_aliases``) of an argument spec, and
  every entry of module_utils/common/deprecations.py, names gpuci.runners and a version that is at least the next
  minor after galaxy.yml's (before 1.0.0), or a later major (from 1.0.0): so an old spelling works for at least
  one minor release, and once galaxy.yml reaches its version this test fails until it is refused;
- each of them has a ``deprecated_features`` changelog entry that names it;
- every ``removed_features`` entry names something a ``deprecated_features`` entry of an earlier release named.
"""

import re
from pathlib import Path

import pytest
import yaml

from ansible_collections.gpuci.runners.plugins.module_utils.common import pool_keys
from ansible_collections.gpuci.runners.plugins.module_utils.common.deprecations import (
    COLLECTION,
    DEPRECATED_CLASS_KEYS,
    DEPRECATED_POOL_KEYS,
    DEPRECATED_VARIABLES,
)
from ansible_collections.gpuci.runners.plugins.module_utils.gpu import classes

REPO = Path(__file__).resolve().parents[2]
NAMED = re.compile(r"``([^`]+)``")


def release(text):
    return tuple(int(part) for part in str(text).split("."))


def collection_version():
    return yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]


def version_problem(removed_in, current):
    """Why ``removed_in`` is no version a deprecation in ``current`` may name ('' when it may)."""
    if not re.fullmatch(r"\d+\.\d+\.\d+", str(removed_in or "")):
        return "names no version X.Y.Z (%r)" % (removed_in,)
    major, minor, patch = release(current)
    wanted = (major, minor + 1, 0) if major == 0 else (major + 1, 0, 0)
    removed = release(removed_in)
    if removed < wanted:
        return "removes it in %s, before %s: it must keep working for one %s release" % (
            removed_in, ".".join(map(str, wanted)), "minor" if major == 0 else "major")
    if major > 0 and removed[1:] != (0, 0):
        return "removes it in %s: from 1.0.0 only a major release removes anything" % removed_in
    return ""


def argument_spec_deprecations():
    """(role, option path, version, collection) of each deprecated option or alias of the roles' argument specs."""
    found = []

    def walk(role, options, prefix):
        for name, spec in (options or {}).items():
            path = prefix + name
            if "removed_in_version" in spec or "removed_at_date" in spec:
                found.append((role, path, spec.get("removed_in_version"), spec.get("removed_from_collection")))
            for alias in spec.get("deprecated_aliases") or []:
                found.append((role, prefix + alias.get("name", ""), alias.get("version"), alias.get("collection_name")))
            walk(role, spec.get("options"), path + ".")

    for path in sorted(REPO.glob("roles/*/meta/argument_specs.yml")):
        role = path.parts[-3]
        for entry in (yaml.safe_load(path.read_text())["argument_specs"] or {}).values():
            walk(role, entry.get("options"), "")
    return found


def role_options(role):
    """The top-level options of the role's argument specs."""
    path = REPO / "roles" / role / "meta" / "argument_specs.yml"
    specs = yaml.safe_load(path.read_text())["argument_specs"] if path.exists() else {}
    return {name for entry in (specs or {}).values() for name in (entry.get("options") or {})}


def changelog_entries():
    """{section: [(release, text)]}: the released changelog's (release ``X.Y.Z``) and the fragments' (release None)."""
    entries = {}
    changelog = yaml.safe_load((REPO / "changelogs/changelog.yaml").read_text()) or {}
    for version, data in (changelog.get("releases") or {}).items():
        for section, texts in ((data or {}).get("changes") or {}).items():
            if isinstance(texts, list):
                entries.setdefault(section, []).extend((str(version), text) for text in texts)
    for fragment in sorted((REPO / "changelogs/fragments").glob("*.y*ml")):
        for section, texts in (yaml.safe_load(fragment.read_text()) or {}).items():
            if isinstance(texts, list):
                entries.setdefault(section, []).extend((None, text) for text in texts)
    return entries


def named_in(entries, name):
    return [version for version, text in entries if name in NAMED.findall(text)]


def removals_without_deprecation(entries, releases):
    """The ``removed_features`` entries none of whose ``names`` an earlier release's ``deprecated_features`` named.

    Only what a release held can be removed from users: the removals of the first release (or, before any
    release, of the fragments) took out what no release had, and need no deprecation.
    """
    first = min((release(v) for v in releases), default=None)
    deprecated = entries.get("deprecated_features", [])
    missing = []
    for version, text in entries.get("removed_features", []):
        if first is None or (version is not None and release(version) <= first):
            continue
        earlier = [v for name in NAMED.findall(text) for v in named_in(deprecated, name)
                   if v is not None and (version is None or release(v) < release(version))]
        if not earlier:
            missing.append(text)
    return missing


def table_deprecations():
    """(what, name, Deprecation) of every entry of module_utils/common/deprecations.py."""
    return ([("variable of " + role, old, entry) for role, table in DEPRECATED_VARIABLES.items()
             for old, entry in table.items()]
            + [("pool key", old, entry) for old, entry in DEPRECATED_POOL_KEYS.items()]
            + [("class key", old, entry) for old, entry in DEPRECATED_CLASS_KEYS.items()])


def test_every_deprecation_of_an_argument_spec_names_the_collection_and_a_later_release():
    current = collection_version()
    problems = ["%s: %s %s" % (role, path, version_problem(version, current))
                for role, path, version, _collection in argument_spec_deprecations()
                if version_problem(version, current)]
    problems += ["%s: %s names collection %r" % (role, path, collection)
                 for role, path, _version, collection in argument_spec_deprecations() if collection != COLLECTION]
    assert problems == []


def test_every_deprecated_spelling_of_the_tables_is_in_step_with_the_argument_specs():
    current = collection_version()
    specs = {(role, path): version for role, path, version, _collection in argument_spec_deprecations()}
    problems = []
    for what, old, (new, removed_in) in table_deprecations():
        if version_problem(removed_in, current):
            problems.append("%s %s: %s" % (what, old, version_problem(removed_in, current)))
    for role, table in DEPRECATED_VARIABLES.items():
        for old, (new, removed_in) in table.items():
            if specs.get((role, old)) != removed_in:
                problems.append("%s: %s must be documented in its argument spec with removed_in_version %s"
                                % (role, old, removed_in))
            if new not in role_options(role):
                problems.append("%s: %s is deprecated for %s, which the role does not have" % (role, old, new))
    for old, (new, _removed_in) in DEPRECATED_POOL_KEYS.items():
        known = pool_keys.GITLAB_POOL_KEYS | pool_keys.ARC_SCALE_SET_KEYS
        if new not in known or old in known or old in pool_keys.RENAMED_POOL_KEYS:
            problems.append("pool key %s: its new name %s must be known, the old one neither known nor refused"
                            % (old, new))
    for old, (new, _removed_in) in DEPRECATED_CLASS_KEYS.items():
        if new not in classes.CLASS_KEYS or old in classes.CLASS_KEYS or old in classes.RENAMED_CLASS_KEYS:
            problems.append("class key %s: its new name %s must be known, the old one neither known nor refused"
                            % (old, new))
    assert problems == []


def test_every_deprecation_has_a_deprecated_features_changelog_entry():
    deprecated = changelog_entries().get("deprecated_features", [])
    names = [path.rsplit(".", 1)[-1] for _role, path, _v, _c in argument_spec_deprecations()]
    names += [old for _what, old, _entry in table_deprecations()]
    assert [name for name in names if not named_in(deprecated, name)] == []


def released_versions():
    changelog = yaml.safe_load((REPO / "changelogs/changelog.yaml").read_text()) or {}
    return [str(version) for version in changelog.get("releases") or {}]


def test_every_removal_was_deprecated_in_an_earlier_release():
    assert removals_without_deprecation(changelog_entries(), released_versions()) == []


# --- the checks themselves, on made-up data (nothing is deprecated today) -------------------------------------

@pytest.mark.parametrize("removed_in, current, ok", [
    ("0.4.0", "0.3.0", True), ("0.5.0", "0.3.0", True), ("0.3.0", "0.3.0", False), ("0.3.1", "0.3.0", False),
    ("0.2.0", "0.3.0", False), ("1.0.0", "0.3.0", True), ("2.0.0", "1.2.0", True), ("1.3.0", "1.2.0", False),
    ("2.1.0", "1.2.0", False), ("next", "0.3.0", False), (None, "0.3.0", False)])
def test_which_versions_a_deprecation_may_name(removed_in, current, ok):
    assert (version_problem(removed_in, current) == "") is ok


def test_a_removal_needs_a_deprecation_in_an_earlier_release():
    entries = {"deprecated_features": [("0.4.0", "gitlab_runner - ``old_key`` is deprecated, use ``new_key``."),
                                       (None, "gitlab_runner - ``later_key`` is deprecated.")],
               "removed_features": [("0.5.0", "gitlab_runner - ``old_key`` is refused."),
                                    ("0.4.0", "gitlab_runner - ``old_key`` went in the same release."),
                                    (None, "gitlab_runner - ``later_key`` is refused."),
                                    (None, "gitlab_runner - ``old_key`` is refused in the next release.")]}
    assert removals_without_deprecation(entries, ["0.3.0", "0.4.0", "0.5.0"]) == [
        "gitlab_runner - ``old_key`` went in the same release.", "gitlab_runner - ``later_key`` is refused."]
    # Before any release, or in the first, nothing a user had is removed.
    assert removals_without_deprecation(entries, []) == []
    assert removals_without_deprecation(entries, ["0.4.0", "0.5.0"]) == ["gitlab_runner - ``later_key`` is refused."]


def test_the_argument_spec_walk_finds_options_and_aliases(tmp_path):
    spec = {"argument_specs": {"main": {"options": {
        "gitlab_runner_old": {"type": "int", "removed_in_version": "0.4.0", "removed_from_collection": COLLECTION},
        "gitlab_runner_pools": {"type": "list", "elements": "dict", "options": {
            "gpu_class": {"type": "str", "deprecated_aliases": [{"name": "accelerator", "version": "0.4.0",
                                                                 "collection_name": COLLECTION}]}}}}}}}
    (tmp_path / "roles/gitlab_runner/meta").mkdir(parents=True)
    (tmp_path / "roles/gitlab_runner/meta/argument_specs.yml").write_text(yaml.safe_dump(spec))
    globals()["REPO"], saved = tmp_path, REPO
    try:
        assert sorted(argument_spec_deprecations()) == [
            ("gitlab_runner", "gitlab_runner_old", "0.4.0", COLLECTION),
            ("gitlab_runner", "gitlab_runner_pools.accelerator", "0.4.0", COLLECTION)]
    finally:
        globals()["REPO"] = saved
