#!/usr/bin/env bash
# Installs pinned helm and kubectl into /usr/local/bin, each checked against
# the sha256 its project publishes next to it. Downloads from the projects'
# own sites unless a mirror with the same layout is given.
set -euo pipefail
helm_version=${1:?helm version, e.g. v4.3.1}
kubectl_version=${2:?kubectl version, e.g. v1.34.4}
helm_base_url=${3:-https://get.helm.sh}
kubectl_base_url=${4:-https://dl.k8s.io/release}
case "$(uname -m)" in
  x86_64) arch=amd64 ;;
  aarch64) arch=arm64 ;;
  *) echo "unsupported architecture $(uname -m)" >&2; exit 1 ;;
esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

helm_tar="helm-${helm_version}-linux-${arch}.tar.gz"
curl -fsSLO "${helm_base_url}/${helm_tar}"
curl -fsSLO "${helm_base_url}/${helm_tar}.sha256sum"
sha256sum -c "${helm_tar}.sha256sum"
tar -xzf "$helm_tar" "linux-${arch}/helm"
install -m 0755 "linux-${arch}/helm" /usr/local/bin/helm

kubectl_url="${kubectl_base_url}/${kubectl_version}/bin/linux/${arch}/kubectl"
curl -fsSLo kubectl "$kubectl_url"
echo "$(curl -fsSL "${kubectl_url}.sha256")  kubectl" | sha256sum -c -
install -m 0755 kubectl /usr/local/bin/kubectl

helm version --short
kubectl version --client
