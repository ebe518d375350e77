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

bash "$(dirname "$0")/../../tools/apt_install.sh" "tests/host (the chroot tests)" "${need[@]}"
