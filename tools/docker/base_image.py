# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The harness's base image: a Debian root made by mmdebstrap, imported into the private engine.

TEST HARNESS ONLY. No registry is reachable from these machines, so the
execution environment is built on this image instead of its public default
(execution-environment.yml). Three things make it a harness image, not a
product one:
- it trusts this machine's CA bundle (/etc/ssl/certs/ca-certificates.crt),
  because the package indexes are reached through this machine's network,
  whose TLS is re-signed by a local CA;
- apt's package lists are kept, so the EE build's bindep step installs
  system packages with apt-get for real;
- Debian's guard against ensurepip on its system Python is lifted:
  ansible-builder's base stage runs `python3.11 -m ensurepip --root /`, which
  Debian refuses ("ensurepip is disabled in Debian/Ubuntu for the system
  python"); the EE's public base (CentOS Stream) has no such guard.

The tag carries a hash of the recipe and the host CA bundle: a changed recipe
builds a new image, an unchanged one is reused in seconds.

    base_image.py            build or reuse it; print its reference
"""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

from dockerd import Engine

SUITE = "bookworm"
MIRROR = os.environ.get("GPUCI_DEBIAN_MIRROR", "http://deb.debian.org/debian")
# What ansible-builder's scripts expect of a base: python3.11 with pip and
# venv (ensurepip), curl for the EE's tool downloads. Nothing else: the EE's
# own system packages come through its bindep.txt.
PACKAGES = ("python3.11", "python3.11-venv", "python3-pip", "ca-certificates", "curl")
HOST_CA_BUNDLE = Path("/etc/ssl/certs/ca-certificates.crt")
REPOSITORY = "gpuci-local/debian"
ENSUREPIP_GUARD = "_ensurepip_is_disabled_in_debian_for_system"
GUARD_LIFTED = "guard lifted by the gpuci harness base image"
# Python clients in the EE (pip's vendored certifi, requests) read the system bundle too.
IMAGE_ENV = ("PIP_CERT=/etc/ssl/certs/ca-certificates.crt", "REQUESTS_CA_BUNDLE=/etc/ssl/certs/ca-certificates.crt",
             "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt")


def reference() -> str:
    recipe = "\n".join([SUITE, MIRROR, *PACKAGES, *IMAGE_ENV, GUARD_LIFTED]).encode() + HOST_CA_BUNDLE.read_bytes()
    return f"{REPOSITORY}:{SUITE}-{hashlib.sha256(recipe).hexdigest()[:12]}"


def exists(ref: str) -> bool:
    return subprocess.run(["docker", "image", "inspect", ref], capture_output=True, check=False).returncode == 0


def build(ref: str) -> None:
    ensurepip = '"$1/usr/lib/python3.11/ensurepip/__init__.py"'
    hook = ('mkdir -p "$1/usr/local/share/ca-certificates/gpuci-host" && '
            f'cp {HOST_CA_BUNDLE} "$1/usr/local/share/ca-certificates/gpuci-host/host-bundle.crt" && '
            'chroot "$1" update-ca-certificates && '
            f"sed -i 's/^    {ENSUREPIP_GUARD}()$/    pass  # {GUARD_LIFTED}/' {ensurepip} && "
            f"grep -q '{GUARD_LIFTED}' {ensurepip}")
    mmdebstrap = ["mmdebstrap", "--variant=minbase", f"--include={','.join(PACKAGES)}",
                  "--skip=cleanup/apt/lists", f"--customize-hook={hook}", SUITE, "-", MIRROR]
    importer = ["docker", "import", *[arg for env in IMAGE_ENV for arg in ("--change", f"ENV {env}")],
                "--change", 'CMD ["bash"]', "-", ref]
    print(f"base image: building {ref} with mmdebstrap ({SUITE}, about a minute)", flush=True)
    started = time.monotonic()
    log_path = Engine.from_environment().logs / "base-image.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    with log_path.open("wb") as log:
        root = subprocess.Popen(mmdebstrap, stdout=subprocess.PIPE, stderr=log)
    imported = subprocess.run(importer, stdin=root.stdout, capture_output=True, text=True, check=False)
    root.stdout.close()
    if root.wait() != 0 or imported.returncode != 0:
        raise SystemExit(f"base image: failed (mmdebstrap exit {root.returncode}, see {log_path}; "
                         f"docker import exit {imported.returncode}: {imported.stderr.strip()})")
    print(f"base image: {ref} built in {time.monotonic() - started:.0f}s", flush=True)


def ensure() -> str:
    ref = reference()
    if exists(ref):
        print(f"base image: reusing {ref}", flush=True)
    else:
        build(ref)
    return ref


if __name__ == "__main__":
    if not os.environ.get("DOCKER_HOST"):
        sys.exit("base image: set DOCKER_HOST (eval \"$(python tools/docker/dockerd.py up)\")")
    print(ensure())
