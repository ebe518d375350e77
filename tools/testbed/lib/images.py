# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The image archives the real node imports (built by tools/testbed/build-images.sh)."""
from __future__ import annotations

import subprocess
from pathlib import Path

from .layout import TOOLS_DIR


def _pinned(name: str) -> str:
    for line in (TOOLS_DIR / "versions.env").read_text().splitlines():
        if line.startswith(name + "="):
            return line.split("=", 1)[1].strip()
    raise KeyError(name)


PAUSE_IMAGE = f"registry.k8s.io/pause:{_pinned('PAUSE_VERSION')}"
# A Debian bookworm root (mmdebstrap) for test and canary pods on the real node.
BASE_IMAGE = "gpuci.local/testbed/debian:bookworm"


def archives() -> list[Path]:
    """The archives built so far; pause first (kubelet needs it for every pod)."""
    printed = subprocess.run(["bash", str(TOOLS_DIR / "build-images.sh"), "--print-archives"],
                             check=True, capture_output=True, text=True).stdout.split()
    found = [Path(p) for p in printed]
    if not any(p.name.startswith("pause-") for p in found):
        raise SystemExit("testbed: the pause image is not built; run: bash tools/testbed/build-images.sh")
    return found
