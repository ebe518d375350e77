# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The image archives the real node imports, and which charts' components can run for real.

No registry is reachable, so every image arrives as an archive:
- built here by tools/testbed/build-images.sh: the pod sandbox (pause), a
  Debian base for test and canary pods, and GitLab Runner's manager and helper
  (built from GitLab Runner's Go module, tools/testbed/gitlab-runner, under the
  testbed's own names: inventories/local points its pools at them);
- provided: the images the other charts' components run (the GPU Operator,
  the ARC controller, the device plugin). Their sources are not served by the
  Go module proxy this machine reaches, so the project cannot build them; a
  maintainer puts each image's archive (`docker save` of the official image,
  or any build of the same reference) in the provided-images folder
  (docs/testbed-images.md).

A component whose images are all on the real node runs there for real
(inventories/local reads real-components.json); otherwise it runs on the
simulated nodes, where nothing executes, and the tests that need it skip,
naming the missing image.
"""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from .layout import TOOLS_DIR, Layout, cache_dir


def pinned(name: str) -> str:
    """A version pinned in tools/testbed/versions.env."""
    for line in (TOOLS_DIR / "versions.env").read_text().splitlines():
        if line.startswith(name + "="):
            return line.split("=", 1)[1].strip()
    raise KeyError(name)


PAUSE_IMAGE = f"registry.k8s.io/pause:{pinned('PAUSE_VERSION')}"
# A Debian bookworm root (mmdebstrap) for test and canary pods on the real node.
BASE_IMAGE = "gpuci.local/testbed/debian:bookworm"

# GitLab Runner as the testbed builds it (build-images.sh names them so).
GITLAB_RUNNER_IMAGE = f"gpuci.local/testbed/gitlab-runner:v{pinned('GITLAB_RUNNER_VERSION')}"
GITLAB_RUNNER_HELPER_IMAGE = f"gpuci.local/testbed/gitlab-runner-helper:x86_64-v{pinned('GITLAB_RUNNER_VERSION')}"

# The exact references the charts in ../shared/charts make the kubelet ask for
# (tests/unit/test_testbed_upstream_images.py derives them from the charts).
UPSTREAM_IMAGES = {
    "gpu-operator": ("nvcr.io/nvidia/gpu-operator:v26.7.0",),
    "arc-controller": ("ghcr.io/actions/gha-runner-scale-set-controller:0.14.2",),
    "device-plugin": ("nvcr.io/nvidia/k8s-device-plugin:v0.20.0",),
}
# The images each component needs on the real node to run there for real.
COMPONENT_IMAGES = {**UPSTREAM_IMAGES, "gitlab-runner": (GITLAB_RUNNER_IMAGE, GITLAB_RUNNER_HELPER_IMAGE)}
REAL_COMPONENTS_FILE = "real-components.json"


def provided_dir() -> Path:
    return Path(os.environ.get("GPUCI_TESTBED_UPSTREAM_IMAGES", cache_dir() / "upstream-images"))


def own_archives() -> list[Path]:
    """The testbed's own image archives as build-images.sh names them (pause first: kubelet needs it for every pod)."""
    printed = subprocess.run(["bash", str(TOOLS_DIR / "build-images.sh"), "--print-archives"],
                             check=True, capture_output=True, text=True).stdout.split()
    found = [Path(p) for p in printed]
    if not any(p.name.startswith("pause-") for p in found):
        raise SystemExit("testbed: the pause image is not built; run: bash tools/testbed/build-images.sh")
    return found


def archives() -> list[Path]:
    """The archives to import: the testbed's own, then the provided."""
    return own_archives() + sorted(provided_dir().glob("*.tar"))


def real_components(references: set[str]) -> list[str]:
    """The components whose every image is among `references` (what containerd holds)."""
    return sorted(name for name, refs in COMPONENT_IMAGES.items() if set(refs) <= references)


def missing_images(references: set[str]) -> dict[str, list[str]]:
    """Per component, the images containerd lacks."""
    return {name: [r for r in refs if r not in references]
            for name, refs in COMPONENT_IMAGES.items() if not set(refs) <= references}


def write_real_components(layout: Layout, references: set[str]) -> list[str]:
    components = real_components(references)
    (layout.state / REAL_COMPONENTS_FILE).write_text(json.dumps(components) + "\n")
    return components


def read_real_components(layout: Layout) -> list[str]:
    """What the running testbed's real node can run; [] without a real node."""
    path = layout.state / REAL_COMPONENTS_FILE
    return json.loads(path.read_text()) if path.is_file() else []
