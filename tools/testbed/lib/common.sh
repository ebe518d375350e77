# Shared by the testbed's build scripts (sourced, not run): the cache layout,
# progress lines for long builds and image archives.
# shellcheck shell=bash
testbed_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../versions.env
source "$testbed_dir/versions.env"
# GPUCI_HELM=4: the testbed's helm is helm 4 (HELM4_VERSION), in its own cache folder.
# shellcheck disable=SC2034,SC2153  # HELM_VERSION is read by the scripts that source this file
if [ "${GPUCI_HELM:-3}" = 4 ]; then HELM_VERSION=$HELM4_VERSION; fi
cache=${GPUCI_TESTBED_CACHE:-$HOME/.cache/gpuci-testbed}
# shellcheck disable=SC2034  # used by the scripts that source this file
images_dir=$cache/images
export GOFLAGS="${GOFLAGS:--buildvcs=false} -trimpath"
export CGO_ENABLED=${CGO_ENABLED:-0}
# The build's clock, in seconds since the epoch: exported, so that the builds
# build.sh runs side by side (each a process of its own) log on one clock.
[ -n "${GPUCI_BUILD_STARTED:-}" ] || printf -v GPUCI_BUILD_STARTED '%(%s)T' -1
export GPUCI_BUILD_STARTED

log() {
  local now; printf -v now '%(%s)T' -1
  printf '[testbed-build %4ds] %s\n' $((now - GPUCI_BUILD_STARTED)) "$*" >&2
}

# need_debian_packages WHO PACKAGE...: install through tools/apt_install.sh
# (one lock for every apt-get of make test's lanes, one error message).
need_debian_packages() { bash "$testbed_dir/../apt_install.sh" "$@"; }
need_mmdebstrap() { command -v mmdebstrap >/dev/null || need_debian_packages "$1" mmdebstrap; }

# Print progress every 30 s while a long build runs, so a cold build is never
# silent. The build runs in the foreground and the ticker beside it, so its
# end is not rounded up to the ticker's next 30 s (a new machine's make demo
# and make test run seventeen); the ticker ends with its sleep (the trap), leaving nothing.
PROGRESS_EVERY_S=${PROGRESS_EVERY_S:-30}
with_progress() {
  local what=$1 t0=$SECONDS ticker rc=0; shift
  (trap 'kill "$nap" 2>/dev/null; exit 0' TERM
   while :; do
     sleep "$PROGRESS_EVERY_S" & nap=$!
     wait "$nap"
     log "still building $what ($((SECONDS - t0))s so far)"
   done) &
  ticker=$!
  "$@" || rc=$?
  kill "$ticker" 2>/dev/null || true
  wait "$ticker" 2>/dev/null || true
  return "$rc"
}

have() { local dir=$1; shift; for b in "$@"; do [ -x "$dir/bin/$b" ] || return 1; done; }

# make_image REF ARCHIVE ARGS...: write an image archive with oci_image.py.
make_image() {
  local ref=$1 out=$2; shift 2
  mkdir -p "$(dirname "$out")"
  python3 "$testbed_dir/oci_image.py" --ref "$ref" --out "$out" "$@"
}

# A Debian bookworm root tarball (mmdebstrap, minbase plus python3), shared
# with the host tests; images that need a shell start from it.
debian_root_tar() {
  need_mmdebstrap "the testbed's Debian root"
  bash "$testbed_dir/../../tests/host/root.sh" tarball
}
