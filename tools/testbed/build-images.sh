#!/usr/bin/env bash
# Variables such as $cache and the pinned versions come from lib/common.sh.
# shellcheck disable=SC2154
# Build the container image archives the testbed's real node imports (no
# registry is reachable): the pod sandbox (pause), a Debian base for test
# and canary pods, and GitLab Runner's manager and helper images around the
# binaries build.sh made from GitLab Runner's Go module. The other charts'
# images are not built here (their sources are not served by the Go module
# proxy): they are provided as archives, see tools/testbed/lib/images.py and
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

# GitLab Runner's images, named as the testbed's own (never as the official
# ones: inventories/local points its pools at them through the role's
# variables). Their archive names carry the binaries' cache key and a hash of
# this script, so a rebuilt runner or a changed recipe gives new archives.
RUNNER_REF=gpuci.local/testbed/gitlab-runner:v$GITLAB_RUNNER_VERSION
HELPER_REF=gpuci.local/testbed/gitlab-runner-helper:x86_64-v$GITLAB_RUNNER_VERSION
runner_bin=$(bash "$here/build.sh" --print-dir gitlab-runner)
runner_key=$(basename "$(dirname "$runner_bin")")-$(sha256sum "$0" | cut -c1-8)  # binaries and this recipe
runner_archive=$images_dir/$runner_key-manager.tar
helper_archive=$images_dir/$runner_key-helper.tar

# What the chart's manager container and the executor's helper container
# run besides the binaries: bash and coreutils (the chart's scripts), dumb-init
# (the chart's command), procps (pgrep: the readiness probe), git and CA
# certificates (the helper clones).
runner_root_tar() {
  local tarball=$cache/debian-gitlab-runner-root-bookworm.tar
  local mirror=${GPUCI_DEBIAN_MIRROR:-http://deb.debian.org/debian}
  if [ ! -s "$tarball" ]; then
    need_mmdebstrap "the GitLab Runner images' Debian root"
    log "building the GitLab Runner images' Debian root with mmdebstrap"
    mmdebstrap --quiet --format=tar --variant=minbase --include=bash,ca-certificates,dumb-init,git,procps \
      bookworm "$tarball.partial" "deb $mirror bookworm main" >&2
    mv "$tarball.partial" "$tarball"
  fi
  echo "$tarball"
}

# /usr/bin/<binary>; for the manager the chart's /entrypoint (upstream's
# image has one that installs CA certificates, then runs gitlab-runner). The
# manager stops on SIGQUIT as upstream's image does: GitLab Runner's graceful
# stop (no new jobs, running ones finish), where SIGTERM would abort them.
runner_layer() {
  local layer=$1 binary=$2 root=$3
  mkdir -p "$layer/usr/bin" "$layer/home/gitlab-runner"
  cp "$runner_bin/$binary" "$layer/usr/bin/$binary"
  if [ "$binary" = gitlab-runner ]; then
    # The chart runs the manager as uid 100, upstream's gitlab-runner user:
    # its home holds the config folder (without a passwd entry HOME is /).
    mkdir -p "$layer/etc"
    { tar -xOf "$root" ./etc/passwd; echo "gitlab-runner:x:100:100:GitLab Runner:/home/gitlab-runner:/bin/bash"; } \
      > "$layer/etc/passwd"
    printf '#!/bin/bash\n# gpuci.runners testbed image: what the chart runs as /entrypoint.\nexec /usr/bin/gitlab-runner "$@"\n' \
      > "$layer/entrypoint"
    chmod 0755 "$layer/entrypoint"
  else
    # What the Kubernetes executor runs in the helper container (upstream's
    # helper image has it; helperimage/linux_info.go): a bash whose files the
    # build container, maybe another user, can write.
    printf '#!/bin/bash\numask 0000\nexec /bin/bash "$@"\n' > "$layer/usr/bin/gitlab-runner-build"
    chmod 0755 "$layer/usr/bin/gitlab-runner-build"
  fi
}

build_gitlab_runner_images() {
  [ -x "$runner_bin/gitlab-runner" ] || { echo "gitlab-runner is not built; run: bash tools/testbed/build.sh gitlab-runner" >&2; exit 1; }
  [ -s "$runner_archive" ] && [ -s "$helper_archive" ] && { log "GitLab Runner images cached"; return; }
  rm -f "$images_dir"/gitlab-runner-*-manager.tar "$images_dir"/gitlab-runner-*-helper.tar  # earlier builds'
  local root work; root=$(runner_root_tar); work=$(mktemp -d)
  runner_layer "$work/manager" gitlab-runner "$root"
  runner_layer "$work/helper" gitlab-runner-helper "$root"
  local labels=(--label "org.opencontainers.image.version=$GITLAB_RUNNER_VERSION"
    --label "gpuci.runners/built-by=tools/testbed (GitLab Runner from its Go module; test harness only)")
  make_image "$RUNNER_REF" "$runner_archive" --base-tar "$root" --layer "$work/manager" \
    --entrypoint '["/usr/bin/dumb-init", "/entrypoint"]' --cmd '["run", "--working-directory=/home/gitlab-runner"]' \
    --user 100 --stop-signal SIGQUIT "${labels[@]}"
  make_image "$HELPER_REF" "$helper_archive" --base-tar "$root" --layer "$work/helper" \
    --cmd '["/bin/bash"]' "${labels[@]}"
  rm -rf "$work"
}

if [ "${1:-}" = --print-archives ]; then
  for f in "$pause_archive" "$base_archive" "$runner_archive" "$helper_archive"; do [ -s "$f" ] && echo "$f"; done
  exit 0
fi

build_pause
build_base
build_gitlab_runner_images
log "images ready under $images_dir"
