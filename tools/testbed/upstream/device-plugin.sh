#!/usr/bin/env bash
# Build the NVIDIA k8s-device-plugin image that GPU Operator v26.7.0 deploys:
# the chart's ClusterPolicy defaults (devicePlugin and gfd: repository
# nvcr.io/nvidia, image k8s-device-plugin, version v0.20.0) give
# nvcr.io/nvidia/k8s-device-plugin:v0.20.0, for the device plugin, GPU feature
# discovery and the MPS control daemon alike. From the v0.20.0 tag, the way
# deployments/container/Dockerfile does:
#   /usr/bin/nvidia-device-plugin, gpu-feature-discovery, mps-control-daemon,
#     config-manager (`make cmds`: cgo, vendor/, -X internal/info.version and
#     gitCommit, -extldflags '--export-dynamic --unresolved-symbols=ignore-in-object-files')
#   /busybox (+ /bin/sh): the operator's device-plugin DaemonSet runs
#     `/bin/sh -c /bin/entrypoint.sh` and `sh -c` init containers
#   glibc from Debian's libc6 (the vendor's base, distroless/go, carries glibc too)
#   /licenses/LICENSE, user 0:0, entrypoint nvidia-device-plugin,
#   NVIDIA_VISIBLE_DEVICES=all, NVIDIA_DRIVER_CAPABILITIES=compute,utility,
#   NVIDIA_DISABLE_REQUIRE=true.
# Why not static: go-nvml (and internal/cuda) call NVML/CUDA functions as
# undefined symbols that the dynamic loader binds after dlopen("libnvidia-ml.so.1",
# RTLD_GLOBAL); a static executable has no dynamic loader, so those calls
# would jump to address 0. The binaries are dynamic and the image brings its
# own glibc, so the image needs nothing from the host but what the NVIDIA
# runtime injects (libnvidia-ml, device nodes) on a GPU host.
# The snapshot lacks a blob under tests/vendor, so tests/ is left out of the export.
#   device-plugin.sh                  build what is missing (binaries, archive)
#   device-plugin.sh --print-archive  print the archive's path, build nothing
# Exit 3 when the source snapshot is not on this machine.
# shellcheck disable=SC2154  # cache, images_dir: set by ../lib/common.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=../lib/common.sh
source "$here/../lib/common.sh"
# shellcheck source=static-base.sh
source "$here/static-base.sh"

ref=nvcr.io/nvidia/k8s-device-plugin:$DEVICE_PLUGIN_VERSION
archive=$images_dir/k8s-device-plugin-$DEVICE_PLUGIN_VERSION.tar
[ "${1:-}" = --print-archive ] && { echo "$archive"; exit 0; }
[ -s "$archive" ] && { log "device plugin image cached ($archive)"; exit 0; }

dir=$cache/device-plugin-$DEVICE_PLUGIN_VERSION
build_lock "$dir"  # then look again: a build beside this one may have written it
[ -s "$archive" ] && { log "device plugin image cached ($archive)"; exit 0; }
bins=(config-manager gpu-feature-discovery mps-control-daemon nvidia-device-plugin)
src=$(upstream_source device-plugin "$DEVICE_PLUGIN_REPO" "$DEVICE_PLUGIN_VERSION" "$DEVICE_PLUGIN_COMMIT" tests)
if have "$dir" "${bins[@]}"; then
  log "device plugin $DEVICE_PLUGIN_VERSION binaries cached"
else
  command -v gcc >/dev/null || { log "installing gcc (Debian package) for cgo"; apt-get install -y -qq gcc >&2; }
  # As the Makefile: GIT_COMMIT is the full commit (--abbrev=40).
  pkg=github.com/NVIDIA/k8s-device-plugin/internal/info
  ldflags="-s -w '-extldflags=-Wl,--export-dynamic -Wl,--unresolved-symbols=ignore-in-object-files'"
  ldflags+=" -X $pkg.gitCommit=$DEVICE_PLUGIN_COMMIT -X $pkg.version=$DEVICE_PLUGIN_VERSION"
  log "building device plugin $DEVICE_PLUGIN_VERSION (${bins[*]}) with cgo, offline from vendor/"
  rm -rf "$dir/bin.partial"; mkdir -p "$dir/bin.partial"
  (
    cd "$src"
    export GOOS=linux GOARCH=amd64 CGO_ENABLED=1 GOPROXY=off GOFLAGS="$GOFLAGS -mod=vendor"
    # go-nvml wraps every NVML call, deprecated ones too: keep gcc's warnings about them out of the log.
    export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"
    cmds=(); for b in "${bins[@]}"; do cmds+=("./cmd/$b"); done
    with_progress "device plugin $DEVICE_PLUGIN_VERSION" \
      nice -n 10 go build -ldflags "$ldflags" -o "$dir/bin.partial/" "${cmds[@]}"
  )
  rm -rf "${dir:?}/bin"; mv "$dir/bin.partial" "$dir/bin"
fi

work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
# glibc: the shared objects of Debian's libc6, the package this Debian machine
# links against (a stable update of it stays compatible), loader at /lib64.
deb_extract libc6 "$work/libc6"
mkdir -p "$work/glibc/lib/x86_64-linux-gnu" "$work/glibc/lib64"
cp -a "$work/libc6/lib/x86_64-linux-gnu/." "$work/glibc/lib/x86_64-linux-gnu/"
cp -a "$work/libc6/lib64/." "$work/glibc/lib64/"
rm -rf "$work/glibc/lib/x86_64-linux-gnu/gconv"
app=$work/app
mkdir -p "$app/usr/bin" "$app/licenses" "$app/busybox" "$app/bin"
for b in "${bins[@]}"; do install -m 0755 "$dir/bin/$b" "$app/usr/bin/$b"; done
install -m 0644 "$src/LICENSE" "$app/licenses/LICENSE"
cp -a "$(busybox_layer)/bin/." "$app/busybox/"
ln -s /busybox/sh "$app/bin/sh"

labels=(); while IFS= read -r l; do labels+=("$l"); done \
  < <(image_labels "$DEVICE_PLUGIN_REPO" "$DEVICE_PLUGIN_VERSION" "$DEVICE_PLUGIN_COMMIT")
log "writing $ref"
make_image "$ref" "$archive" --layer "$(static_base)" --layer "$work/glibc" --layer "$app" \
  --entrypoint '["nvidia-device-plugin"]' --workdir / --user 0:0 \
  --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/busybox \
  --env NVIDIA_DISABLE_REQUIRE=true --env NVIDIA_VISIBLE_DEVICES=all \
  --env NVIDIA_DRIVER_CAPABILITIES=compute,utility "${labels[@]}"
