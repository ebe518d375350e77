#!/usr/bin/env bash
# Installs the gpuci.runners tarball copied into the build context
# (awx/ee/collection) into the image's system collections path. Its
# dependencies (kubernetes.core, community.general) come with the `ansible`
# package of requirements.txt.
set -euo pipefail
src=${1:?folder with gpuci-runners-*.tar.gz}
shopt -s nullglob
tarballs=("$src"/gpuci-runners-*.tar.gz)
if [ "${#tarballs[@]}" -ne 1 ]; then
  echo "expected exactly one gpuci-runners-*.tar.gz in awx/ee/collection, found ${#tarballs[@]};" >&2
  echo "run: ansible-galaxy collection build --output-path awx/ee/collection --force" >&2
  exit 1
fi
ansible-galaxy collection install --no-deps --collections-path /usr/share/ansible/collections "${tarballs[0]}"
