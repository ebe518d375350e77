// Command coredns is the CoreDNS of the Docker tier's kind node image
// (tools/kind/node_image.py): CoreDNS's own server (coremain) with only the
// plugins of the Corefile kubeadm writes (errors, health, ready, kubernetes,
// prometheus, forward, cache, loop, reload, loadbalance), and log and hosts for
// a Corefile edited by hand.
//
// Upstream's main imports all of CoreDNS's plugins (core/plugin); their cloud
// DNS providers' SDKs made CoreDNS about 7 minutes of a cold build on 2 cores,
// and a kind cluster's Corefile reaches none of them. This main imports
// CoreDNS's packages; it copies none of their code. Test harness only: kind
// users run the image kubeadm names.
package main

import (
	"github.com/coredns/coredns/coremain"

	// The plugins register themselves (plugin.Register) when imported; the
	// server orders them by dnsserver.Directives, unchanged.
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
)

func main() {
	coremain.Run()
}
