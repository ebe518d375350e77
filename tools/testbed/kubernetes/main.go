// GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
// SPDX-License-Identifier: GPL-3.0-or-later

// Command kubernetes is one multi-call binary of the testbed's Kubernetes
// components, as hyperkube once was: run through a link named kube-apiserver,
// kube-controller-manager, kube-scheduler, kube-proxy, kubelet, kubectl or
// kubeadm, it is that component, built from k8s.io/kubernetes exactly as its
// own main does. One copy of the shared libraries makes it about a third of
// separate binaries, which is what lets the GPU proof's bundle fit fewer
// device calls. kubeadm and kube-proxy serve the kind node image (tools/kind),
// whose control plane kubeadm makes.
// tools/testbed/build.sh builds it in a generated wrapper module.
package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	_ "k8s.io/client-go/plugin/pkg/client/auth" // kubectl: client auth plugins
	"k8s.io/component-base/cli"
	"k8s.io/component-base/logs"
	_ "k8s.io/component-base/logs/json/register"          // JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"  // version metric
	kubectl "k8s.io/kubectl/pkg/cmd"
	"k8s.io/kubectl/pkg/cmd/util"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	proxy "k8s.io/kubernetes/cmd/kube-proxy/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
	kubeadm "k8s.io/kubernetes/cmd/kubeadm/app"
	kubeadmerrors "k8s.io/kubernetes/cmd/kubeadm/app/util/errors"
	kubelet "k8s.io/kubernetes/cmd/kubelet/app"
	_ "time/tzdata" // CronJob time zones, as the API server's and controller manager's mains
)

var servers = map[string]func() *cobra.Command{
	"kube-apiserver":          apiserver.NewAPIServerCommand,
	"kube-controller-manager": controllermanager.NewControllerManagerCommand,
	"kube-proxy":              proxy.NewProxyCommand,
	"kube-scheduler":          func() *cobra.Command { return scheduler.NewSchedulerCommand() },
	"kubelet":                 func() *cobra.Command { return kubelet.NewKubeletCommand(context.Background()) },
}

func main() {
	name := filepath.Base(os.Args[0])
	if name == "kubectl" {
		// As kubectl's own main: verbosity first, errors printed by kubectl's helper.
		logs.GlogSetter(kubectl.GetLogVerbosity(os.Args)) // nolint:errcheck
		if err := cli.RunNoErrOutput(kubectl.NewDefaultKubectlCommand()); err != nil {
			util.CheckErr(err)
		}
		return
	}
	if name == "kubeadm" {
		// As kubeadm's own main: it prints its errors and picks the exit code.
		kubeadmerrors.HandleError(kubeadm.Run())
		return
	}
	command, ok := servers[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "run through a link named kube-apiserver, kube-controller-manager, kube-scheduler, kube-proxy, kubelet, kubectl or kubeadm (not %s)\n", name)
		os.Exit(2)
	}
	os.Exit(cli.Run(command()))
}
