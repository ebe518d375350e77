// Command gitlab-runner is the TESTBED's GitLab Runner manager: GitLab
// Runner's own packages (gitlab.com/gitlab-org/gitlab-runner, the version
// go.mod pins) wired with the commands the gitlab-runner chart's manager
// container runs (register, run, verify, unregister, list) and the Kubernetes
// executor only.
//
// Upstream's main.go registers every executor, cache adapter and secrets
// resolver; their cloud SDKs triple the build and none of them is reached on
// the testbed, where jobs run in pods through the Kubernetes executor. This
// main imports GitLab Runner's library packages; it copies none of their code.
// Test harness only: users run the official image the chart names.
package main

import (
	"os"
	"path/filepath"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli"

	"gitlab.com/gitlab-org/gitlab-runner/commands"
	"gitlab.com/gitlab-org/gitlab-runner/common"
	"gitlab.com/gitlab-org/gitlab-runner/executors"
	"gitlab.com/gitlab-org/gitlab-runner/executors/kubernetes"
	cli_helpers "gitlab.com/gitlab-org/gitlab-runner/helpers/cli"
	"gitlab.com/gitlab-org/gitlab-runner/log"
	"gitlab.com/gitlab-org/gitlab-runner/network"
	"gitlab.com/gitlab-org/gitlab-runner/router"

	// The shells the executor writes job scripts for (bash, sh, pwsh).
	_ "gitlab.com/gitlab-org/gitlab-runner/shells"
)

func main() {
	providers := executors.NewProviderRegistry(map[string]common.ExecutorProvider{
		common.ExecutorKubernetes: kubernetes.NewProvider(),
	})
	client, shutdown, collector := newClient(providers)
	defer shutdown()

	app := cli.NewApp()
	app.Name = filepath.Base(os.Args[0])
	app.Usage = "a GitLab Runner (gpuci.runners testbed build: Kubernetes executor only)"
	app.Version = common.AppVersion.ShortLine()
	cli.VersionPrinter = common.AppVersion.Printer
	app.Commands = []cli.Command{
		commands.NewListCommand(),
		commands.NewRegisterCommand(client, providers),
		commands.NewResetTokenCommand(client),
		commands.NewRunCommand(client, collector, providers),
		commands.NewRunSingleCommand(client, providers),
		commands.NewUnregisterCommand(client),
		commands.NewVerifyCommand(client),
	}
	app.CommandNotFound = func(_ *cli.Context, command string) {
		logrus.Fatalln("Command", command, "not found.")
	}

	cli_helpers.InitCli()
	cli_helpers.LogRuntimePlatform(app)
	cli_helpers.FixHOME(app)
	log.ConfigureLogging(app)

	if err := app.Run(os.Args); err != nil {
		logrus.Fatal(err)
	}
}

// newClient is the GitLab API client the commands share, as upstream builds
// it: the router client in front of the plain GitLab client.
func newClient(providers executors.Providers) (common.Network, func(), *network.APIRequestsCollector) {
	collector := network.NewAPIRequestsCollector()
	certDir := commands.GetDefaultCertificateDirectory()
	gitlab := network.NewGitLabClient(
		network.WithAPIRequestsCollector(collector),
		network.WithCertificateDirectory(certDir),
		network.WithExecutorProviderFunc(providers.GetByName),
	)
	routed := router.NewClient(gitlab, certDir, common.AppVersion.UserAgent())
	return routed, routed.Shutdown, collector
}
