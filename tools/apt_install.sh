#!/usr/bin/env bash
# Install Debian packages for a test tier: tools/apt_install.sh WHO PACKAGE...
# (WHO names the tier in the error). make test runs tiers side by side, and
# apt-get refuses to run while another holds its locks, so every tier's
# install waits here for the one before it (flock on one lock file).
# Needs root on Debian/Ubuntu; says so, naming WHO, where it cannot install.
set -euo pipefail
who=$1; shift
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "$who needs $* and can only install them as root on Debian/Ubuntu (apt-get)." >&2
  exit 1
fi
echo "== $who: installing $*" >&2
mkdir -p /run/lock && exec 9> /run/lock/gpuci-apt-install.lock
flock 9
# docker.io's package scripts try to start the system engine; there is no
# init system here and the Docker tier starts its own, so that failure is moot.
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null; }; then
  echo "$who: could not install $* with apt-get." >&2
  exit 1
fi
