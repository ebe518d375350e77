# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The testbed's own Go tools are rebuilt whenever their sources change: their cache folders name the hash."""
import hashlib
import subprocess
from pathlib import Path

import pytest

from lib.layout import TOOLS_DIR

SOURCES = ("go.mod", "go.sum", "main.go")


@pytest.mark.parametrize("folder", ["deviceplugin", "netsetup"])
def test_cache_folder_follows_the_sources(folder):
    digest = hashlib.sha256(b"".join((TOOLS_DIR / folder / name).read_bytes() for name in SOURCES))
    printed = subprocess.run(["bash", str(TOOLS_DIR / "build.sh"), "--print-paths"], capture_output=True,
                             text=True, check=True).stdout.split(":")
    folders = [Path(p).parent.name for p in printed if Path(p).parent.name.startswith(folder + "-")]
    assert folders == [f"{folder}-{digest.hexdigest()[:12]}"]
