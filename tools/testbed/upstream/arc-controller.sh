#!/usr/bin/env bash
# Build the ARC controller image that chart gha-runner-scale-set-controller
# 0.14.2 deploys (ghcr.io/actions/gha-runner-scale-set-controller:0.14.2),
# from the gha-runner-scale-set-0.14.2 tag, the way the repository's Dockerfile
# does: five static binaries (/manager, /ghalistener, /github-webhook-server,
# /actions-metrics-server, /sleep) on a distroless/static:nonroot-like root,
# user 65532:65532, entrypoint /manager. The chart runs /manager with its
# args and mounts an emptyDir on /tmp; the listener pods the controller
# creates use the same image with command /ghalistener.
#   arc-controller.sh                  build what is missing (binaries, archive)
#   arc-controller.sh --print-archive  print the archive's path, build nothing
# Exit 3 when the source snapshot is not on this machine.
# shellcheck disable=SC2154  # cache, images_dir: set by ../lib/common.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/common.sh
source "$here/../lib/common.sh"
# shellcheck source=static-base.sh
source "$here/static-base.sh"

ref=ghcr.io/actions/gha-runner-scale-set-controller:$ARC_VERSION
archive=$images_dir/gha-runner-scale-set-controller-$ARC_VERSION.tar
[ "${1:-}" = --print-archive ] && { echo "$archive"; exit 0; }
[ -s "$archive" ] && { log "ARC controller image cached ($archive)"; exit 0; }

dir=$cache/arc-controller-$ARC_VERSION
build_lock "$dir"  # then look again: a build beside this one may have written it
[ -s "$archive" ] && { log "ARC controller image cached ($archive)"; exit 0; }
bins=(manager ghalistener github-webhook-server actions-metrics-server sleep)
if have "$dir" "${bins[@]}"; then
  log "ARC controller $ARC_VERSION binaries cached"
else
  src=$(upstream_source arc "$ARC_REPO" "$ARC_TAG" "$ARC_COMMIT")
  # As the Dockerfile: VERSION is the release (the controller stamps it on the
  # resources it owns and compares it with the chart's), COMMIT_SHA the commit.
  pkg=github.com/actions/actions-runner-controller/build
  ldflags="-s -w -X '$pkg.Version=$ARC_VERSION' -X '$pkg.CommitSHA=$ARC_COMMIT'"
  log "building ARC controller $ARC_VERSION (${bins[*]}); modules through GOPROXY"
  rm -rf "$dir/bin.partial"; mkdir -p "$dir/bin.partial"
  out=$dir/bin.partial
  arc_binaries() {
    nice -n 10 go build -ldflags "$ldflags" -o "$out/manager" main.go
    nice -n 10 go build -ldflags "$ldflags" -o "$out/ghalistener" ./cmd/ghalistener
    nice -n 10 go build -ldflags "-s -w" -o "$out/github-webhook-server" ./cmd/githubwebhookserver
    nice -n 10 go build -ldflags "-s -w" -o "$out/actions-metrics-server" ./cmd/actionsmetricsserver
    nice -n 10 go build -ldflags "-s -w" -o "$out/sleep" ./cmd/sleep
  }
  (
    cd "$src"
    export GOOS=linux GOARCH=amd64 CGO_ENABLED=0 GOFLAGS="$GOFLAGS -mod=mod"
    with_progress "ARC controller $ARC_VERSION" arc_binaries
  )
  rm -rf "${dir:?}/bin"; mv "$dir/bin.partial" "$dir/bin"
fi

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/app"
for b in "${bins[@]}"; do install -m 0755 "$dir/bin/$b" "$work/app/$b"; done
labels=(); while IFS= read -r l; do labels+=("$l"); done < <(image_labels "$ARC_REPO" "$ARC_VERSION" "$ARC_COMMIT")
log "writing $ref"
make_image "$ref" "$archive" --layer "$(static_base)" --layer "$work/app" \
  --entrypoint '["/manager"]' --workdir / --user 65532:65532 "${labels[@]}"
