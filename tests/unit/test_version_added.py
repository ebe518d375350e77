# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""No plugin says it was added in a version after the collection's own (galaxy.yml)."""

import re
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]

VERSION_ADDED = re.compile(r"^\s*version_added:\s*['\"]?([0-9][0-9.]*)", re.MULTILINE)
DOCUMENTED = ["plugins/filter/*.yml", "plugins/modules/*.py", "plugins/action/*.py", "roles/*/meta/argument_specs.yml"]


def release(text):
    return tuple(int(part) for part in text.split("."))


def test_every_version_added_is_at_most_the_collection_version():
    collection = yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]
    found = {str(path.relative_to(REPO)): VERSION_ADDED.findall(path.read_text())
             for pattern in DOCUMENTED for path in sorted(REPO.glob(pattern))}
    assert sum(len(versions) for versions in found.values()) > 20, "the pattern found too few version_added entries"
    later = {path: versions for path, versions in found.items()
             if any(release(version) > release(collection) for version in versions)}
    assert later == {}, "version_added after galaxy.yml's %s" % collection
