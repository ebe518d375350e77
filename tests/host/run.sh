#!/usr/bin/env bash
# The chroot tests of roles/container_toolkit, from a fresh machine:
# host packages, the venv, the real nvidia-ctk, then pytest tests/host.
# Needs root (chroot, device nodes in the unpacked root).
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "$(id -u)" -ne 0 ]; then
  echo "tests/host/run.sh must run as root (it chroots into a Debian root)." >&2
  exit 1
fi
bash tests/host/prepare.sh
make -s venv
bash tools/testbed/build.sh nvidia-ctk
exec .venv/bin/pytest -q tests/host "$@"
