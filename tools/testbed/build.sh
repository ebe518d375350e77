#!/usr/bin/env bash
# Build the testbed's binaries from their Go modules at the versions pinned in
# versions.env, into a cache outside the repository:
#   ${GPUCI_TESTBED_CACHE:-~/.cache/gpuci-testbed}/<component>-<version>/bin
# A component whose binaries are already there is not rebuilt.
# Usage: build.sh [component ...]   (kubernetes etcd kwok helm nvidia-ctk; default all)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=versions.env
source "$here/versions.env"
cache=${GPUCI_TESTBED_CACHE:-$HOME/.cache/gpuci-testbed}
export GOFLAGS="${GOFLAGS:--buildvcs=false} -trimpath"
export CGO_ENABLED=${CGO_ENABLED:-0}
started=$SECONDS

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

# k8s.io/kubernetes replaces its staging modules with local paths, so it cannot
# be built with `go install pkg@version`. A generated wrapper module requires it
# and points every k8s.io staging module at its published tag instead.
build_kubernetes() {
  local dir=$cache/kubernetes-$KUBERNETES_VERSION
  have "$dir" kube-apiserver kube-controller-manager kube-scheduler kubectl && { log "kubernetes $KUBERNETES_VERSION cached"; return; }
  local work=$dir/wrapper; mkdir -p "$work" "$dir/bin"
  local staging
  # The staging modules are the ones k8s.io/kubernetes's own go.mod replaces
  # with ./staging paths; `go mod download` fetches that go.mod through the
  # configured GOPROXY.
  local modfile
  modfile=$(go mod download -json "k8s.io/kubernetes@$KUBERNETES_VERSION" | sed -n 's/.*"GoMod": "\(.*\)".*/\1/p')
  staging=$(awk '/=> \.\/staging\/src\// {print $1}' "$modfile")
  {
    echo "module gpuci.local/testbed/kubernetes"
    echo "go 1.24.0"
    echo "require k8s.io/kubernetes $KUBERNETES_VERSION"
    for m in $staging; do echo "replace $m => $m $KUBERNETES_STAGING_VERSION"; done
  } > "$work/go.mod"
  local minor=${KUBERNETES_VERSION#v1.}; minor=${minor%%.*}
  local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION \
    -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor \
    -X k8s.io/component-base/version.gitTreeState=clean \
    -X k8s.io/client-go/pkg/version.gitVersion=$KUBERNETES_VERSION"
  log "building kubernetes $KUBERNETES_VERSION (apiserver, controller-manager, scheduler, kubectl)"
  (cd "$work" && GOFLAGS="$GOFLAGS -mod=mod" with_progress "kubernetes $KUBERNETES_VERSION" \
    go build -ldflags "$ldflags" -o "$dir/bin/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager \
      k8s.io/kubernetes/cmd/kube-scheduler k8s.io/kubernetes/cmd/kubectl)
}

# etcd's server module also carries relative replaces; a wrapper main calls etcdmain.
build_etcd() {
  local dir=$cache/etcd-$ETCD_VERSION
  have "$dir" etcd && { log "etcd $ETCD_VERSION cached"; return; }
  local work=$dir/wrapper; mkdir -p "$work" "$dir/bin"
  cat > "$work/go.mod" <<MOD
module gpuci.local/testbed/etcd
go 1.24.0
require (
	go.etcd.io/etcd/server/v3 $ETCD_VERSION
	go.etcd.io/etcd/api/v3 $ETCD_VERSION
	go.etcd.io/etcd/client/pkg/v3 $ETCD_VERSION
	go.etcd.io/etcd/client/v3 $ETCD_VERSION
	go.etcd.io/etcd/pkg/v3 $ETCD_VERSION
)
MOD
  cat > "$work/main.go" <<'GO'
// Command etcd runs the etcd server from its published Go module.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
GO
  log "building etcd $ETCD_VERSION"
  (cd "$work" && GOFLAGS="$GOFLAGS -mod=mod" with_progress "etcd" go build -ldflags "-s -w" -o "$dir/bin/etcd" .)
}

build_kwok() {
  local dir=$cache/kwok-$KWOK_VERSION
  have "$dir" kwok && { log "kwok $KWOK_VERSION cached"; return; }
  log "building kwok $KWOK_VERSION"
  GOBIN=$dir/bin with_progress kwok go install -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
}

build_helm() {
  local dir=$cache/helm-$HELM_VERSION
  have "$dir" helm && { log "helm $HELM_VERSION cached"; return; }
  log "building helm $HELM_VERSION"
  GOBIN=$dir/bin with_progress helm go install \
    -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$HELM_VERSION -X helm.sh/helm/v3/internal/version.gitTreeState=clean" \
    "helm.sh/helm/v3/cmd/helm@$HELM_VERSION"
}

# nvidia-ctk links libnvidia-container lookups through cgo.
build_nvidia_ctk() {
  local dir=$cache/nvidia-ctk-$NVIDIA_CTK_VERSION
  have "$dir" nvidia-ctk && { log "nvidia-ctk $NVIDIA_CTK_VERSION cached"; return; }
  log "building nvidia-ctk $NVIDIA_CTK_VERSION"
  local pkg=github.com/NVIDIA/nvidia-container-toolkit
  GOBIN=$dir/bin CGO_ENABLED=1 with_progress nvidia-ctk go install \
    -ldflags "-s -w -X $pkg/internal/info.version=${NVIDIA_CTK_VERSION#v}" \
    "$pkg/cmd/nvidia-ctk@$NVIDIA_CTK_VERSION"
}

# --print-paths: the bin folders, joined by ':', for PATH (nothing is built).
if [ "${1:-}" = --print-paths ]; then
  printf '%s:' "$cache/kubernetes-$KUBERNETES_VERSION/bin" "$cache/etcd-$ETCD_VERSION/bin" \
    "$cache/kwok-$KWOK_VERSION/bin" "$cache/helm-$HELM_VERSION/bin" "$cache/nvidia-ctk-$NVIDIA_CTK_VERSION/bin" | sed 's/:$//'
  exit 0
fi

components=("$@")
[ ${#components[@]} -gt 0 ] || components=(kwok helm etcd nvidia-ctk kubernetes)
for c in "${components[@]}"; do
  case $c in
    kubernetes) build_kubernetes ;;
    etcd) build_etcd ;;
    kwok) build_kwok ;;
    helm) build_helm ;;
    nvidia-ctk) build_nvidia_ctk ;;
    *) echo "unknown component: $c" >&2; exit 2 ;;
  esac
done
log "all requested binaries ready under $cache"
