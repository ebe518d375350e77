#!/usr/bin/env bash
# The Debian target of the chroot tests, shared by tests/host (pytest) and
# molecule/host:
#   root.sh tarball          build the cached Debian root tarball if missing, print its path
#   root.sh unpack DIR       unpack a fresh copy of it into DIR
#   root.sh repo DIR         put a signed stand-in apt repository into DIR/srv/gpuci-apt
# Environment: GPUCI_TESTBED_CACHE (cache root), GPUCI_DEBIAN_MIRROR, GPUCI_NVIDIA_CTK.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
cache=${GPUCI_TESTBED_CACHE:-$HOME/.cache/gpuci-testbed}
suite=bookworm
tarball=$cache/debian-root-$suite.tar
# Same mirror as this machine's own sources (deb.debian.org unless overridden).
mirror=${GPUCI_DEBIAN_MIRROR:-http://deb.debian.org/debian}

tarball() {
  if [ ! -s "$tarball" ]; then
    mkdir -p "$cache"
    echo "== building $tarball with mmdebstrap from $mirror" >&2
    # python3 and python3-apt: Ansible's modules and its apt module.
    mmdebstrap --quiet --format=tar --variant=minbase --include=python3,python3-apt \
      "$suite" "$tarball.partial" "deb $mirror $suite main" >&2
    mv "$tarball.partial" "$tarball"
  fi
  echo "$tarball"
}

unpack() {
  local dir=$1
  mkdir -p "$dir"
  tar -xf "$(tarball)" -C "$dir"
}

repo() {
  local root=$1
  local ctk=${GPUCI_NVIDIA_CTK:-$(bash "$here/../../tools/testbed/build.sh" --print-dir nvidia-ctk)/nvidia-ctk}
  [ -x "$ctk" ] || { echo "nvidia-ctk not found at $ctk; run tools/testbed/build.sh nvidia-ctk" >&2; exit 1; }
  python3 "$here/standin_repo.py" --nvidia-ctk "$ctk" --out "$root/srv/gpuci-apt"
}

case ${1:-} in
  tarball) tarball ;;
  unpack) unpack "$2" ;;
  repo) repo "$2" ;;
  *) echo "usage: $0 tarball | unpack DIR | repo DIR" >&2; exit 2 ;;
esac
