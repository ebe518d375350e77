// Command gitlab-runner-helper is the TESTBED's GitLab Runner helper: the
// binary the Kubernetes executor runs in a job pod's helper container (git
// clone, logs, artifacts and cache), wired from GitLab Runner's own helper
// commands (gitlab.com/gitlab-org/gitlab-runner/commands/helpers). Upstream's
// helper also carries the native-steps command; its step-runner module is
// not served here (see ../../replacements). Test harness only.
package main

import (
	"os"
	"path/filepath"

	"github.com/sirupsen/logrus"
	"github.com/urfave/cli"

	"gitlab.com/gitlab-org/gitlab-runner/commands/helpers"
	"gitlab.com/gitlab-org/gitlab-runner/common"
	"gitlab.com/gitlab-org/gitlab-runner/log"
)

func main() {
	app := cli.NewApp()
	app.Name = filepath.Base(os.Args[0])
	app.Usage = "a GitLab Runner Helper (gpuci.runners testbed build)"
	app.Version = common.AppVersion.ShortLine()
	cli.VersionPrinter = common.AppVersion.Printer
	app.Commands = []cli.Command{
		helpers.NewArtifactsDownloaderCommand(),
		helpers.NewArtifactsUploaderCommand(),
		helpers.NewCacheArchiverCommand(),
		helpers.NewCacheExtractorCommand(),
		helpers.NewCacheInitCommand(),
		helpers.NewHealthCheckCommand(),
		helpers.NewProbeURLCommand(),
		helpers.NewVerifyVersionCommand(),
		helpers.NewReadLogsCommand(),
	}
	app.CommandNotFound = func(_ *cli.Context, command string) {
		logrus.Fatalln("Command", command, "not found")
	}
	log.ConfigureLogging(app)

	if err := app.Run(os.Args); err != nil {
		logrus.Fatal(err)
	}
}
