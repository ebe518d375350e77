# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""tools/awx/build_ee.py tags the EE by what it is built from, so an unchanged checkout reuses it.

The build itself needs a Docker engine: tests/docker builds and runs it."""
from __future__ import annotations

import io
import json
import sys
import tarfile

from conftest import REPO

sys.path.insert(0, str(REPO / "tools" / "awx"))
import build_ee  # noqa: E402


def _with_files_json_changed(source, target) -> None:
    """A copy of the collection tarball whose FILES.json says one file changed."""
    with tarfile.open(source) as old, tarfile.open(target, "w:gz") as new:
        for member in old.getmembers():
            data = old.extractfile(member).read() if member.isfile() else None
            if member.name == "FILES.json":
                files = json.loads(data)
                entry = next(f for f in files["files"] if f["chksum_sha256"])
                entry["chksum_sha256"] = "0" * 64
                data = json.dumps(files).encode()
                member.size = len(data)
            new.addfile(member, io.BytesIO(data) if data is not None else None)


def test_the_tag_is_stable_for_a_checkout_and_follows_its_files(tmp_path):
    first = build_ee.image_reference(build_ee.build_collection())
    tarball = build_ee.build_collection()
    assert build_ee.image_reference(tarball) == first, "rebuilding the same checkout must reuse the image"
    version = first.split(":", 1)[1].split("-", 1)[0]
    assert first.startswith(f"{build_ee.REPOSITORY}:{version}-")
    changed = tmp_path / tarball.name
    _with_files_json_changed(tarball, changed)
    assert build_ee.image_reference(changed) != first
