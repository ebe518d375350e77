#!/usr/bin/env bash
# Variables such as $cache and the pinned versions come from lib/common.sh.
# shellcheck disable=SC2154
# Build the container image archives the testbed's real node imports (no
# registry is reachable): the pod sandbox (pause) and a Debian base for test
# and canary pods. The images the charts' own components run are not built
# here (their sources are not served by the Go module proxy): they are
# provided as archives, see tools/testbed/lib/images.py and
# docs/testbed-images.md.
#   build-images.sh                   build what is missing
#   build-images.sh --print-archives  list the archives built, one a line
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/common.sh
source "$here/lib/common.sh"

PAUSE_REF=registry.k8s.io/pause:$PAUSE_VERSION
BASE_REF=gpuci.local/testbed/debian:bookworm
pause_archive=$images_dir/pause-$PAUSE_VERSION.tar
# -cuda-env: the base carries CUDA images' PATH and LD_LIBRARY_PATH (the
# driver's GKE-style folders), so GPU mode's injected nvidia-smi is on PATH.
base_archive=$images_dir/debian-bookworm-cuda-env.tar

build_pause() {
  [ -s "$pause_archive" ] && { log "pause image cached"; return; }
  local work; work=$(mktemp -d)
  mkdir -p "$work/rootfs"
  cc -Os -static -o "$work/rootfs/pause" "$here/images/pause.c"
  strip "$work/rootfs/pause"
  make_image "$PAUSE_REF" "$pause_archive" --layer "$work/rootfs" --entrypoint '["/pause"]' --user 65535:65535 \
    --label "org.opencontainers.image.source=tools/testbed/images/pause.c (gpuci.runners)" \
    --label "gpuci.runners/built-by=tools/testbed (stands in for registry.k8s.io/pause)"
  rm -rf "$work"
}

build_base() {
  [ -s "$base_archive" ] && { log "Debian base image cached"; return; }
  make_image "$BASE_REF" "$base_archive" --base-tar "$(debian_root_tar)" --cmd '["/bin/bash"]' \
    --env PATH=/usr/local/nvidia/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --env LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64 \
    --label "org.opencontainers.image.source=mmdebstrap bookworm minbase (+python3)" \
    --label "gpuci.runners/built-by=tools/testbed"
}

if [ "${1:-}" = --print-archives ]; then
  for f in "$pause_archive" "$base_archive"; do [ -s "$f" ] && echo "$f"; done
  exit 0
fi

build_pause
build_base
log "images ready under $images_dir"
