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
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing ${need[*]}" >&2
  apt-get update -qq
  # docker.io's package scripts try to start the system engine; there is no
  # init system here and the harness starts its own, so that failure is moot.
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
make -s venv
exec .venv/bin/pytest -q --durations=10 tests/docker "$@"
