#!/usr/bin/env bash
# Install the Debian host tools the chroot tests need, when missing:
# mmdebstrap (builds the Debian root), dpkg-dev/apt-utils (the stand-in apt
# repository) and gnupg (signs it). Fails loudly instead of letting tests skip.
set -euo pipefail

need=()
command -v mmdebstrap >/dev/null || need+=(mmdebstrap)
command -v dpkg-deb >/dev/null || need+=(dpkg)
command -v apt-ftparchive >/dev/null || need+=(apt-utils)
command -v gpg >/dev/null || need+=(gnupg)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
  echo "tests/host needs ${need[*]} and can only install them as root on Debian/Ubuntu (apt-get)." >&2
  exit 1
fi
echo "== installing ${need[*]}" >&2
if ! { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null; }; then
  echo "tests/host: could not install ${need[*]} with apt-get; the chroot tests cannot run." >&2
  exit 1
fi
