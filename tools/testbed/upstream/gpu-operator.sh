#!/usr/bin/env bash
# Build the NVIDIA GPU Operator image that chart gpu-operator v26.7.0 deploys
# (nvcr.io/nvidia/gpu-operator:v26.7.0), from the v26.7.0 tag, the way the
# repository's docker/Dockerfile does:
#   /usr/bin/gpu-operator, manage-crds, cleanup-gpuclusters, nvidia-validator
#     (`make cmds`: CGO_ENABLED=0, -X internal/info.version/gitCommit; built
#     offline from the snapshot's vendor/ folder)
#   /opt/gpu-operator/            assets/ (the operand manifests the operator reads)
#   /opt/gpu-operator/manifests   manifests/
#   /opt/validator/manifests      validator/manifests/
#   /opt/gpu-operator/*.yaml      the CRDs the chart's upgrade/cleanup hooks apply
#   /busybox (+ /bin/sh)          static busybox, as upstream: the same image is
#                                 the validator, whose operand pods run `sh -c`
#   /licenses/LICENSE, user 1000:1000, entrypoint /usr/bin/gpu-operator,
#   NVIDIA_VISIBLE_DEVICES=void.
# Left out: the CUDA vectorAdd sample and CUDA compat libraries (they need
# nvcc; only the validator's CUDA workload on a GPU node runs them), and the
# distroless/cc C libraries (every binary here is static).
#   gpu-operator.sh                  build what is missing (binaries, archive)
#   gpu-operator.sh --print-archive  print the archive's path, build nothing
# Exit 3 when the source snapshot is not on this machine.
# shellcheck disable=SC2154  # cache, images_dir: set by ../lib/common.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/common.sh
source "$here/../lib/common.sh"
# shellcheck source=static-base.sh
source "$here/static-base.sh"

ref=nvcr.io/nvidia/gpu-operator:$GPU_OPERATOR_VERSION
archive=$images_dir/gpu-operator-$GPU_OPERATOR_VERSION.tar
[ "${1:-}" = --print-archive ] && { echo "$archive"; exit 0; }
[ -s "$archive" ] && { log "GPU Operator image cached ($archive)"; exit 0; }

dir=$cache/gpu-operator-$GPU_OPERATOR_VERSION
build_lock "$dir"  # then look again: a build beside this one may have written it
[ -s "$archive" ] && { log "GPU Operator image cached ($archive)"; exit 0; }
bins=(gpu-operator manage-crds cleanup-gpuclusters nvidia-validator)
src=$(upstream_source gpu-operator "$GPU_OPERATOR_REPO" "$GPU_OPERATOR_VERSION" "$GPU_OPERATOR_COMMIT")
if have "$dir" "${bins[@]}"; then
  log "GPU Operator $GPU_OPERATOR_VERSION binaries cached"
else
  # The Makefile's GIT_COMMIT is `git describe --long --always`: the commit
  # abbreviated (9 characters on the tag's snapshot).
  pkg=github.com/NVIDIA/gpu-operator/internal/info
  ldflags="-s -w -X $pkg.gitCommit=${GPU_OPERATOR_COMMIT:0:9} -X $pkg.version=$GPU_OPERATOR_VERSION"
  log "building GPU Operator $GPU_OPERATOR_VERSION (${bins[*]}) offline from vendor/"
  rm -rf "$dir/bin.partial"; mkdir -p "$dir/bin.partial"
  (
    cd "$src"
    export GOOS=linux GOARCH=amd64 CGO_ENABLED=0 GOPROXY=off GOFLAGS="$GOFLAGS -mod=vendor"
    cmds=(); for b in "${bins[@]}"; do cmds+=("./cmd/$b"); done
    with_progress "GPU Operator $GPU_OPERATOR_VERSION" \
      nice -n 10 go build -ldflags "$ldflags" -o "$dir/bin.partial/" "${cmds[@]}"
  )
  rm -rf "${dir:?}/bin"; mv "$dir/bin.partial" "$dir/bin"
fi

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
app=$work/app
mkdir -p "$app/usr/bin" "$app/opt/gpu-operator" "$app/opt/validator" "$app/licenses"
for b in "${bins[@]}"; do install -m 0755 "$dir/bin/$b" "$app/usr/bin/$b"; done
cp -R "$src/assets/." "$app/opt/gpu-operator/"
cp -R "$src/manifests" "$app/opt/gpu-operator/manifests"
cp -R "$src/validator/manifests" "$app/opt/validator/manifests"
for crd in nvidia.com_clusterpolicies nvidia.com_nvidiadrivers nvidia.com_gpuclusters; do
  install -m 0644 "$src/deployments/gpu-operator/crds/$crd.yaml" "$app/opt/gpu-operator/$crd.yaml"
done
install -m 0644 "$src/deployments/gpu-operator/charts/node-feature-discovery/crds/nfd-api-crds.yaml" \
  "$app/opt/gpu-operator/nfd-api-crds.yaml"
install -m 0644 "$src/LICENSE" "$app/licenses/LICENSE"
# Upstream keeps busybox in /busybox (on PATH) and links /bin/sh to it.
mkdir -p "$app/busybox" "$app/bin"
cp -a "$(busybox_layer)/bin/." "$app/busybox/"
ln -s /busybox/sh "$app/bin/sh"
chmod -R u+rwX,go+rX,go-w "$app"

labels=(); while IFS= read -r l; do labels+=("$l"); done \
  < <(image_labels "$GPU_OPERATOR_REPO" "$GPU_OPERATOR_VERSION" "$GPU_OPERATOR_COMMIT")
log "writing $ref"
make_image "$ref" "$archive" --layer "$(static_base)" --layer "$app" \
  --entrypoint '["/usr/bin/gpu-operator"]' --workdir / --user 1000:1000 \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/busybox \
  --env NVIDIA_VISIBLE_DEVICES=void "${labels[@]}"
