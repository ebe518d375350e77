#!/usr/bin/env bash
# Variables such as $cache and the pinned versions come from lib/common.sh.
# shellcheck disable=SC2154
# Build the testbed's binaries from their Go modules at the versions pinned in
# versions.env, into a cache outside the repository:
#   ${GPUCI_TESTBED_CACHE:-~/.cache/gpuci-testbed}/<component>-<version>/bin
# A component whose binaries are already there is not rebuilt.
# Usage: build.sh [component ...] | --print-paths | --print-dir component...
#   (kubernetes etcd kwok helm nvidia-ctk containerd runc cni device-plugin dra-plugin netsetup
#   runc-wrapper gitlab-runner prometheus;
#   default all; the Docker tier's kind harness adds kind, etcd-kind and
#   coredns-kind)
# kubernetes includes the kubelet; containerd, runc and the CNI plugins make the
# real node. All are static, so the same files run on a GPU host without a
# package manager.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=lib/common.sh
source "$here/lib/common.sh"

# Every build below runs Go; a component already cached needs none. Without Go
# on PATH a build stops here, saying so (a test run must fail, not skip).
go() {
  if ! type -P go > /dev/null; then
    echo "error: building the testbed needs Go, and go is not on PATH (cached binaries under $cache need none)" >&2
    exit 1
  fi
  command go "$@"
}

# k8s.io/kubernetes replaces its staging modules with local paths, so it cannot
# be built with `go install pkg@version`. A generated wrapper module requires it
# and points every k8s.io staging module at its published tag instead; its main
# (tools/testbed/kubernetes/main.go) is one multi-call binary of all seven
# components, linked under each component's name.
KUBERNETES_COMPONENTS=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kubeadm kube-proxy)
kubernetes_dir() { echo "$cache/kubernetes-$KUBERNETES_VERSION-multicall"; }

build_kubernetes() {
  local dir; dir=$(kubernetes_dir)
  have "$dir" kubernetes "${KUBERNETES_COMPONENTS[@]}" && { log "kubernetes $KUBERNETES_VERSION cached"; return; }
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
  cp "$testbed_dir/kubernetes/main.go" "$work/main.go"
  local minor=${KUBERNETES_VERSION#v1.}; minor=${minor%%.*}
  local ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$KUBERNETES_VERSION \
    -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor \
    -X k8s.io/component-base/version.gitTreeState=clean \
    -X k8s.io/client-go/pkg/version.gitVersion=$KUBERNETES_VERSION"
  log "building kubernetes $KUBERNETES_VERSION (one binary: ${KUBERNETES_COMPONENTS[*]})"
  (cd "$work" && GOFLAGS="$GOFLAGS -mod=mod" with_progress "kubernetes $KUBERNETES_VERSION" \
    go build -ldflags "$ldflags" -o "$dir/bin/kubernetes" .)
  local component
  for component in "${KUBERNETES_COMPONENTS[@]}"; do ln -sfn kubernetes "$dir/bin/$component"; done
}

# etcd's server module also carries relative replaces; a wrapper main calls etcdmain.
# build_etcd COMPONENT VERSION: etcd (ETCD_VERSION) or etcd-kind, the kind node
# image's etcd, the one kubeadm asks for (KIND_ETCD_VERSION).
build_etcd() {
  local version=$2 dir
  dir=$(component_dir "$1")
  have "$dir" etcd && { log "etcd $version cached"; return; }
  local work=$dir/wrapper; mkdir -p "$work" "$dir/bin"
  cat > "$work/go.mod" <<MOD
module gpuci.local/testbed/etcd
go 1.24.0
require (
	go.etcd.io/etcd/server/v3 $version
	go.etcd.io/etcd/api/v3 $version
	go.etcd.io/etcd/client/pkg/v3 $version
	go.etcd.io/etcd/client/v3 $version
	go.etcd.io/etcd/pkg/v3 $version
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
  log "building etcd $version"
  (cd "$work" && GOFLAGS="$GOFLAGS -mod=mod" with_progress "etcd" go build -ldflags "-s -w" -o "$dir/bin/etcd" .)
}

# go_install DIR BINARY LABEL PACKAGE@VERSION: a Go tool whose published
# module builds with `go install`, into DIR/bin unless BINARY is there.
go_install() {
  local dir=$1 binary=$2 label=$3 package=$4
  have "$dir" "$binary" && { log "$label cached"; return; }
  log "building $label"
  GOBIN=$dir/bin with_progress "$binary" go install -ldflags "-s -w" "$package"
}

build_kwok() {
  go_install "$(component_dir kwok)" kwok "kwok $KWOK_VERSION" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION"
}

build_helm() {
  local dir module=helm.sh/helm/${HELM_VERSION%%.*}  # helm.sh/helm/v3 or /v4
  dir=$(component_dir helm)
  have "$dir" helm && { log "helm $HELM_VERSION cached"; return; }
  log "building helm $HELM_VERSION"
  GOBIN=$dir/bin with_progress helm go install \
    -ldflags "-s -w -X $module/internal/version.version=$HELM_VERSION -X $module/internal/version.gitTreeState=clean" \
    "$module/cmd/helm@$HELM_VERSION"
}

# nvidia-ctk links libnvidia-container lookups through cgo. GPU mode of the
# real node also runs the runtime (in CDI mode: pure Go) and the CDI hook.
build_nvidia_ctk() {
  local dir; dir=$(component_dir nvidia-ctk)
  have "$dir" nvidia-ctk nvidia-container-runtime nvidia-cdi-hook && { log "nvidia-ctk $NVIDIA_CTK_VERSION cached"; return; }
  log "building nvidia-ctk, nvidia-container-runtime, nvidia-cdi-hook $NVIDIA_CTK_VERSION"
  local pkg=github.com/NVIDIA/nvidia-container-toolkit
  GOBIN=$dir/bin CGO_ENABLED=1 with_progress nvidia-ctk go install \
    -ldflags "-s -w -X $pkg/internal/info.version=${NVIDIA_CTK_VERSION#v}" \
    "$pkg/cmd/nvidia-ctk@$NVIDIA_CTK_VERSION" "$pkg/cmd/nvidia-container-runtime@$NVIDIA_CTK_VERSION" \
    "$pkg/cmd/nvidia-cdi-hook@$NVIDIA_CTK_VERSION"
}

# The testbed's own Go tools (tools/testbed/<folder>): GPU mode's stand-ins of
# the device plugin and of the DRA kubelet plugin, the netlink helper for
# hosts without `ip`, and the runc wrapper of VMs without CAP_SYS_RESOURCE
# (tools/testbed/runcwrapper: test harness only). Cached under a hash of their sources, since they have no
# version of their own.
# own_dir FOLDER [CACHE]
own_dir() {
  local folder=$1 under=${2:-$cache} sum
  sum=$(cd "$testbed_dir/$folder" && cat go.mod go.sum main.go | sha256sum)
  echo "$under/$folder-${sum:0:12}"
}

build_own() {
  local folder=$1 binary=$2 dir
  dir=$(own_dir "$folder")
  have "$dir" "$binary" && { log "$binary cached"; return; }
  log "building $binary (tools/testbed/$folder)"
  (cd "$testbed_dir/$folder" && GOFLAGS="$GOFLAGS -mod=mod" with_progress "$binary" \
    go build -ldflags "-s -w" -o "$dir/bin/$binary" .)
}

# GitLab Runner's manager and helper (tools/testbed/gitlab-runner): our mains
# over GitLab Runner's published Go module, with small replacements for the
# modules the proxy refuses (tools/testbed/gitlab-runner/replacements). Stamped
# as upstream stamps a release: the version from the module's VERSION file,
# the revision from its pseudo-version. Cached under a hash of our sources.
gitlab_runner_dir() {
  local sum
  sum=$(cd "$testbed_dir/gitlab-runner" && find . -type f \( -name '*.go' -o -name 'go.mod' -o -name 'go.sum' \) \
    -print0 | sort -z | xargs -0 cat | sha256sum)
  echo "$cache/gitlab-runner-${sum:0:12}"
}

build_gitlab_runner() {
  local dir; dir=$(gitlab_runner_dir)
  have "$dir" gitlab-runner gitlab-runner-helper && { log "gitlab-runner cached"; return; }
  local src=$testbed_dir/gitlab-runner module=gitlab.com/gitlab-org/gitlab-runner
  local info module_dir pseudo version revision
  # Downloaded first: `go list -m` names no folder for a module not yet in
  # the module cache (a new machine), and VERSION is read from that folder.
  info=$(cd "$src" && GOFLAGS="$GOFLAGS -mod=mod" go mod download -json "$module")
  module_dir=$(sed -n 's/.*"Dir": "\(.*\)".*/\1/p' <<<"$info")
  pseudo=$(sed -n 's/.*"Version": "\(.*\)".*/\1/p' <<<"$info")
  [ -f "$module_dir/VERSION" ] || { echo "error: go mod download gave no folder with VERSION for $module: $info" >&2; exit 1; }
  version=$(cat "$module_dir/VERSION")
  [ "$version" = "$GITLAB_RUNNER_VERSION" ] || {
    echo "error: go.mod builds GitLab Runner $version, versions.env says $GITLAB_RUNNER_VERSION" >&2; exit 1; }
  revision=${pseudo##*-}; revision=${revision:0:8}
  local ldflags="-s -w -X $module/common.VERSION=$version -X $module/common.REVISION=$revision"
  log "building gitlab-runner $version ($revision): manager and helper"
  (cd "$src" && GOFLAGS="$GOFLAGS -mod=mod" with_progress "gitlab-runner $version" \
    go build -ldflags "$ldflags" -o "$dir/bin/" ./cmd/gitlab-runner ./cmd/gitlab-runner-helper)
}

# Prometheus and promtool from Prometheus's Go module (v0.3MM.P is Prometheus
# 3.MM.P): promtool checks and unit-tests the collection's alert rules
# (tests/rules); the server is for a Prometheus on the testbed. Stamped as
# upstream's release stamps them (prometheus/common's version package).
# Without the builtinassets tag the server serves its API but not the web UI.
# Prometheus's own build tags keep two service discoveries of its 27: file and
# http always, Kubernetes because the testbed's scrape jobs use it
# (lib/podmonitors.py). With all of them, Prometheus was over a quarter of a
# cold build (750 s of 2650 s on 2 cores), most of it the cloud SDKs of
# discoveries the testbed never reaches. The tags name the cache folder.
prometheus_dir() { echo "$cache/prometheus-$PROMETHEUS_VERSION-kubernetes-sd"; }
build_prometheus() {
  local dir; dir=$(prometheus_dir)
  local mod=github.com/prometheus/prometheus
  have "$dir" prometheus promtool && { log "prometheus $PROMETHEUS_VERSION cached"; return; }
  local release=${PROMETHEUS_VERSION#v0.} common=github.com/prometheus/common/version
  release="${release:0:1}.$((10#${release:1:2})).${release#*.}"
  log "building prometheus and promtool $PROMETHEUS_VERSION (Prometheus $release)"
  GOBIN=$dir/bin with_progress prometheus go install -tags "netgo remove_all_sd enable_kubernetes_sd" \
    -ldflags "-s -w -X $common.Version=$release -X $common.Branch=HEAD -X $common.Revision=$PROMETHEUS_VERSION" \
    "$mod/cmd/prometheus@$PROMETHEUS_VERSION" "$mod/cmd/promtool@$PROMETHEUS_VERSION"
}

# The real node's container runtime: containerd 2.x (daemon, shim, ctr).
build_containerd() {
  local dir; dir=$(component_dir containerd)
  have "$dir" containerd containerd-shim-runc-v2 ctr && { log "containerd $CONTAINERD_VERSION cached"; return; }
  log "building containerd $CONTAINERD_VERSION"
  local mod=github.com/containerd/containerd/v2
  GOBIN=$dir/bin with_progress containerd go install -tags "no_btrfs no_devmapper no_zfs" \
    -ldflags "-s -w -X $mod/version.Version=$CONTAINERD_VERSION" \
    "$mod/cmd/containerd@$CONTAINERD_VERSION" "$mod/cmd/containerd-shim-runc-v2@$CONTAINERD_VERSION" \
    "$mod/cmd/ctr@$CONTAINERD_VERSION"
}

# runc needs cgo for seccomp (kubelet asks for RuntimeDefault profiles); linked
# statically against Debian's libseccomp so it runs on any glibc.
build_runc() {
  local dir; dir=$(component_dir runc)
  have "$dir" runc && { log "runc $RUNC_VERSION cached"; return; }
  [ -f /usr/lib/x86_64-linux-gnu/libseccomp.a ] || need_debian_packages "runc's static build with seccomp" libseccomp-dev
  log "building runc $RUNC_VERSION"
  GOBIN=$dir/bin CGO_ENABLED=1 with_progress runc go install -tags "seccomp urfave_cli_no_docs" \
    -ldflags "-s -w -X main.version=${RUNC_VERSION#v} -extldflags -static" \
    "github.com/opencontainers/runc@$RUNC_VERSION"
}

# The CNI plugins the real node's network needs: a bridge, host-local
# addresses, loopback.
build_cni() {
  local dir; dir=$(component_dir cni)
  have "$dir" bridge host-local loopback && { log "CNI plugins $CNI_PLUGINS_VERSION cached"; return; }
  log "building CNI plugins $CNI_PLUGINS_VERSION"
  local mod=github.com/containernetworking/plugins
  GOBIN=$dir/bin with_progress cni-plugins go install -ldflags "-s -w" \
    "$mod/plugins/main/bridge@$CNI_PLUGINS_VERSION" "$mod/plugins/ipam/host-local@$CNI_PLUGINS_VERSION" \
    "$mod/plugins/main/loopback@$CNI_PLUGINS_VERSION"
}

# kind and the CoreDNS its node image carries, for the harness's kind
# clusters (tools/kind); their cache folder is apart from the testbed's since
# only the Docker tier uses them.
kind_cache=${GPUCI_KIND_CACHE:-$HOME/.cache/gpuci-kind}
build_kind() {
  go_install "$(component_dir kind)" kind "kind $KIND_VERSION" "sigs.k8s.io/kind@$KIND_VERSION"
}

# CoreDNS with the plugins of kubeadm's Corefile only (tools/testbed/coredns:
# our main over CoreDNS's module, which pins KIND_COREDNS_VERSION), cached
# like our own tools, under a hash of its sources.
build_coredns() {
  local dir; dir=$(component_dir coredns-kind)
  grep -q "github.com/coredns/coredns $KIND_COREDNS_VERSION\$" "$testbed_dir/coredns/go.mod" || {
    echo "error: tools/testbed/coredns/go.mod does not require CoreDNS $KIND_COREDNS_VERSION (versions.env)" >&2; exit 1; }
  have "$dir" coredns && { log "CoreDNS $KIND_COREDNS_VERSION cached"; return; }
  log "building CoreDNS $KIND_COREDNS_VERSION (tools/testbed/coredns: kubeadm's Corefile plugins)"
  (cd "$testbed_dir/coredns" && GOFLAGS="$GOFLAGS -mod=mod" with_progress coredns \
    go build -ldflags "-s -w" -o "$dir/bin/coredns" .)
}

# component_dir COMPONENT: the cache folder each component's build puts its
# bin/ in; the one place that names them (--print-dir answers it for others).
component_dir() {
  case $1 in
    kubernetes) kubernetes_dir ;;
    etcd) echo "$cache/etcd-$ETCD_VERSION" ;;
    etcd-kind) echo "$cache/etcd-$KIND_ETCD_VERSION" ;;
    kwok) echo "$cache/kwok-$KWOK_VERSION" ;;
    helm) echo "$cache/helm-$HELM_VERSION" ;;
    nvidia-ctk) echo "$cache/nvidia-ctk-$NVIDIA_CTK_VERSION" ;;
    containerd) echo "$cache/containerd-$CONTAINERD_VERSION" ;;
    runc) echo "$cache/runc-$RUNC_VERSION" ;;
    cni) echo "$cache/cni-plugins-$CNI_PLUGINS_VERSION" ;;
    device-plugin) own_dir deviceplugin ;;
    dra-plugin) own_dir draplugin ;;
    netsetup) own_dir netsetup ;;
    runc-wrapper) own_dir runcwrapper ;;
    gitlab-runner) gitlab_runner_dir ;;
    prometheus) prometheus_dir ;;
    kind) echo "$kind_cache/kind-$KIND_VERSION" ;;
    coredns-kind) own_dir coredns "$kind_cache" ;;
    *) echo "unknown component: $1" >&2; return 2 ;;
  esac
}

# The testbed's components, what `build.sh` with no argument builds, the
# longest build first (cold, on 2 cores: kubernetes about 6.5 min, Prometheus
# 3.5, kwok and GitLab Runner 3, helm 2, the rest 1.5 or less), so that the
# builds side by side (below) end close together.
TESTBED_COMPONENTS=(kubernetes prometheus kwok gitlab-runner helm containerd etcd nvidia-ctk runc cni device-plugin dra-plugin
  netsetup runc-wrapper)

# --print-paths: the testbed's bin folders, joined by ':', for PATH.
# --print-dir COMPONENT...: each one's bin folder, one a line (nothing is built).
case ${1:-} in
  --print-paths)
    printf '%s' "$(for c in "${TESTBED_COMPONENTS[@]}"; do echo "$(component_dir "$c")/bin"; done | paste -sd: -)"
    exit 0 ;;
  --print-dir)
    shift
    for c in "$@"; do dir=$(component_dir "$c") || exit 2; echo "$dir/bin"; done
    exit 0 ;;
esac

# build_one COMPONENT: build it under a lock beside its cache folder, so that
# two builds at once (make test's lanes, two checkouts sharing the cache)
# never build one component together: the second waits, then finds it cached.
build_one() {
  local c=$1 dir lock_fd
  dir=$(component_dir "$c")
  mkdir -p "$(dirname "$dir")"
  exec {lock_fd}> "$dir.lock"
  if ! flock -n "$lock_fd"; then
    log "$c: another build of it holds $dir.lock; waiting for it"
    with_progress "$c (waiting for the other build)" flock "$lock_fd"
  fi
  case $c in
    kubernetes) build_kubernetes ;;
    etcd) build_etcd etcd "$ETCD_VERSION" ;;
    etcd-kind) build_etcd etcd-kind "$KIND_ETCD_VERSION" ;;
    kind) build_kind ;;
    coredns-kind) build_coredns ;;
    kwok) build_kwok ;;
    helm) build_helm ;;
    nvidia-ctk) build_nvidia_ctk ;;
    containerd) build_containerd ;;
    runc) build_runc ;;
    cni) build_cni ;;
    device-plugin) build_own deviceplugin gpuci-device-plugin ;;
    dra-plugin) build_own draplugin gpuci-dra-plugin ;;
    netsetup) build_own netsetup gpuci-netsetup ;;
    runc-wrapper) build_own runcwrapper gpuci-runc-wrapper ;;
    gitlab-runner) build_gitlab_runner ;;
    prometheus) build_prometheus ;;
  esac
  exec {lock_fd}>&-
}

# --one COMPONENT: one build, for the builds side by side below.
if [ "${1:-}" = --one ]; then build_one "$2"; exit 0; fi

components=("$@")
[ ${#components[@]} -gt 0 ] || components=("${TESTBED_COMPONENTS[@]}")
for c in "${components[@]}"; do component_dir "$c" > /dev/null || exit 2; done
# One Go build leaves the cores idle while it downloads its modules and links
# (a fifth of a cold build on 2 cores), so GPUCI_BUILD_JOBS builds run side by
# side, each taking the next component in the order given when one ends.
build_jobs=${GPUCI_BUILD_JOBS:-2}
if [ ${#components[@]} -gt 1 ] && [ "$build_jobs" -gt 1 ]; then
  printf '%s\n' "${components[@]}" | xargs -P "$build_jobs" -n 1 bash "$0" --one ||
    { echo "error: a testbed build failed (its error is above)" >&2; exit 1; }
else
  for c in "${components[@]}"; do build_one "$c"; done
fi
log "all requested binaries ready under $cache"
