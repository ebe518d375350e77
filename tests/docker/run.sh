#!/usr/bin/env bash
# The Docker tier from a fresh machine: docker.io and mmdebstrap from Debian
# when missing, the venv, the testbed's binaries, then pytest tests/docker.
# Needs root (dockerd, mmdebstrap).
set -euo pipefail
cd "$(dirname "$0")/../.."

if [ "$(id -u)" -ne 0 ]; then
  echo "tests/docker/run.sh must run as root (it starts a private dockerd)." >&2
  exit 1
fi
need=()
command -v dockerd >/dev/null || need+=(docker.io)
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
[ ${#need[@]} -eq 0 ] || bash tools/apt_install.sh "tests/docker" "${need[@]}"
make -s venv
exec .venv/bin/pytest -q --durations=10 tests/docker "$@"
