#!/usr/bin/env bash
# gpuci-node-network: the pod network of the harness's kind node image.
#
# TEST HARNESS ONLY (tools/kind/node_image.py). kind's stock node image runs
# kindnetd for this; kindnetd's Go module is not served to these machines, so
# the harness's image runs this script the way kindnetd runs: a DaemonSet pod
# on the host network (node/default-cni.yaml) with a service account that may
# read nodes (a kubelet's own credentials may read only its own Node). It does
# the two things kindnetd does for a cluster on one Docker network:
#   1. once the controller manager gave this node its pod CIDR, write a CNI
#      config (bridge + host-local over that CIDR) so the kubelet turns Ready;
#   2. keep a route to every other node's pod CIDR through that node's address.
# No network policy, no masquerade beyond the bridge plugin's own.
set -u
conf=/etc/cni/net.d/10-gpuci-bridge.conflist
node=${NODE_NAME:?the DaemonSet sets NODE_NAME from spec.nodeName}

# kubectl is given the pod's service account explicitly; tokenFile makes it
# re-read the token, which the kubelet rotates.
account=/var/run/secrets/kubernetes.io/serviceaccount
export KUBECONFIG=/tmp/gpuci-node-network.kubeconfig
cat > "$KUBECONFIG" <<CONFIG
apiVersion: v1
kind: Config
clusters:
  - name: in-cluster
    cluster: {server: "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT", certificate-authority: $account/ca.crt}
users:
  - name: gpuci-node-network
    user: {tokenFile: $account/token}
contexts:
  - name: in-cluster
    context: {cluster: in-cluster, user: gpuci-node-network}
current-context: in-cluster
CONFIG

kc() { kubectl --request-timeout=10s "$@"; }

write_cni_config() {
  local cidr=$1
  mkdir -p "$(dirname "$conf")"
  cat > "$conf.partial" <<CONF
{
  "cniVersion": "1.0.0",
  "name": "gpuci-kind",
  "plugins": [{
    "type": "bridge", "bridge": "cni0", "isGateway": true, "ipMasq": true, "hairpinMode": true,
    "ipam": {"type": "host-local", "ranges": [[{"subnet": "$cidr"}]], "routes": [{"dst": "0.0.0.0/0"}]}
  }]
}
CONF
  mv "$conf.partial" "$conf"
  echo "gpuci-node-network: CNI config written for pod CIDR $cidr"
}

while true; do
  {
    cidr=$(kc get node "$node" -o 'jsonpath={.spec.podCIDR}' 2>/dev/null || true)
    if [ -n "$cidr" ] && ! grep -qF "\"$cidr\"" "$conf" 2>/dev/null; then
      write_cni_config "$cidr"
    fi
    # Simulated (kwok) nodes run no pod that could be reached: no route to them.
    kc get nodes -o 'jsonpath={range .items[*]}{.metadata.name}|{.spec.podCIDR}|{.status.addresses[?(@.type=="InternalIP")].address}|{.metadata.annotations.kwok\.x-k8s\.io/node}{"\n"}{end}' 2>/dev/null |
      while IFS='|' read -r name pod_cidr address simulated; do
        [ "$name" != "$node" ] && [ -n "$pod_cidr" ] && [ -n "$address" ] && [ -z "$simulated" ] &&
          ip route replace "$pod_cidr" via "$address"
      done
  }
  sleep 3
done
