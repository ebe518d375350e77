# Shared by the testbed's build scripts (sourced, not run): the cache layout,
# progress lines for long builds, source snapshots and image archives.
# shellcheck shell=bash
testbed_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=../versions.env
source "$testbed_dir/versions.env"
# shellcheck source=../upstream.env
source "$testbed_dir/upstream.env"
cache=${GPUCI_TESTBED_CACHE:-$HOME/.cache/gpuci-testbed}
# shellcheck disable=SC2034  # used by the scripts that source this file
images_dir=$cache/images
export GOFLAGS="${GOFLAGS:--buildvcs=false} -trimpath"
export CGO_ENABLED=${CGO_ENABLED:-0}
started=${started:-$SECONDS}

log() { printf '[testbed-build %4ds] %s\n' $((SECONDS - started)) "$*" >&2; }

# Print progress while a long build runs, so a cold build is never silent.
with_progress() {
  local what=$1; shift
  "$@" &
  local pid=$! t0=$SECONDS
  while kill -0 "$pid" 2>/dev/null; do
    sleep 30
    kill -0 "$pid" 2>/dev/null && log "still building $what ($((SECONDS - t0))s so far)"
  done
  wait "$pid"
}

have() { local dir=$1; shift; for b in "$@"; do [ -x "$dir/bin/$b" ] || return 1; done; }

# upstream_source NAME REPO TAG COMMIT [EXCLUDE...]: print a folder holding the
# repository's tree at TAG, exported once from its snapshot into the cache.
# Each EXCLUDE is a top-level path left out of the export (a snapshot may lack
# blobs there, e.g. k8s-device-plugin's tests/vendor). Exit 3, saying how to
# get the snapshot, when neither the export nor the snapshot is here.
upstream_source() {
  local name=$1 repo=$2 tag=$3 commit=$4; shift 4
  local pathspec=(.) x
  for x in "$@"; do pathspec+=(":(exclude)$x"); done
  local dest=$cache/src/$name-$tag
  if [ -f "$dest/.gpuci-commit" ]; then echo "$dest"; return; fi
  local git_dir=${GPUCI_MIRROR_DIR:-/work/.mirror}/${repo/\//+}/repo
  [ -d "$git_dir/.git" ] && git_dir=$git_dir/.git
  if ! git --git-dir="$git_dir" rev-parse -q --verify "$tag^{commit}" >/dev/null 2>&1; then
    log "no source snapshot of $repo at $tag on this machine ($git_dir)."
    log "get one with the search tool's fetch (github:$repo), or set GPUCI_MIRROR_DIR"
    exit 3
  fi
  local found
  found=$(git --git-dir="$git_dir" rev-parse "$tag^{commit}")
  if [ "$found" != "$commit" ]; then
    log "snapshot of $repo: $tag is $found, upstream.env pins $commit; refusing to build"
    exit 3
  fi
  log "exporting $repo $tag ($commit) into $dest"
  # git may still name missing objects under an excluded path; they are not needed.
  [ $# -eq 0 ] || log "leaving out: $*"
  rm -rf "$dest.partial"; mkdir -p "$dest.partial"
  git --git-dir="$git_dir" archive "$commit" -- "${pathspec[@]}" | tar -x -C "$dest.partial"
  echo "$commit" > "$dest.partial/.gpuci-commit"
  rm -rf "$dest"; mv "$dest.partial" "$dest"
  echo "$dest"
}

# image_labels REPO VERSION COMMIT: the --label arguments every image carries,
# so `ctr images ls`/`crictl inspecti` tell where a testbed image came from.
image_labels() {
  printf -- '--label\norg.opencontainers.image.source=https://github.com/%s\n' "$1"
  printf -- '--label\norg.opencontainers.image.version=%s\n' "$2"
  printf -- '--label\norg.opencontainers.image.revision=%s\n' "$3"
  printf -- '--label\ngpuci.runners/built-by=tools/testbed (local build from source, not the vendor image)\n'
}

# make_image REF ARCHIVE ARGS...: write an image archive with oci_image.py.
make_image() {
  local ref=$1 out=$2; shift 2
  mkdir -p "$(dirname "$out")"
  python3 "$testbed_dir/oci_image.py" --ref "$ref" --out "$out" "$@"
}

# A Debian bookworm root tarball (mmdebstrap, minbase plus python3), shared
# with the host tests; images that need a shell start from it.
debian_root_tar() {
  command -v mmdebstrap >/dev/null || { log "installing mmdebstrap (Debian package)"; apt-get install -y -qq mmdebstrap >&2; }
  bash "$testbed_dir/../../tests/host/root.sh" tarball
}
