// Package extended: step-runner's client (gpuci.runners testbed REPLACEMENT; see
// ../../../../doc.go). New answers steprunner.ErrNotAvailable: no native steps run.
package extended

import (
	"context"
	"io"

	steprunner "gitlab.com/gitlab-org/step-runner"
	"gitlab.com/gitlab-org/step-runner/pkg/api/client"
)

// FollowOutput is where a followed run's logs go.
type FollowOutput struct {
	Logs io.Writer
}

// Client would talk to a step-runner; this replacement never makes one.
type Client struct{}

// New fails: there is no step-runner in this build.
func New(_ any) (*Client, error) { return nil, steprunner.ErrNotAvailable }

// RunAndFollow fails like New.
func (*Client) RunAndFollow(context.Context, *client.RunRequest, *FollowOutput) (client.Status, error) {
	return client.Status{}, steprunner.ErrNotAvailable
}

// Cancel fails like New.
func (*Client) Cancel(context.Context, string) error { return steprunner.ErrNotAvailable }

// CloseConn has nothing to close.
func (*Client) CloseConn() error { return nil }
