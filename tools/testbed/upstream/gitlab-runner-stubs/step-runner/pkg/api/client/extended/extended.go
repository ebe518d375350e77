// Stand-in for gitlab.com/gitlab-org/step-runner@v0.29.0 (package pkg/api/client/extended), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package extended

import (
	"context"
	"io"

	"gitlab.com/gitlab-org/step-runner/internal/stub"
	"gitlab.com/gitlab-org/step-runner/pkg/api/client"
)

// Dialer opens the gRPC connection to step-runner (upstream: Dial() (*grpc.ClientConn, error)).
type Dialer = any

// FollowOutput receives a run's logs.
type FollowOutput struct {
	Logs io.Writer
}

// Client would talk to step-runner; New never returns one.
type Client struct{}

// New fails: there is no step-runner client in this build.
func New(Dialer) (*Client, error) { return nil, stub.Err("pkg/api/client/extended.New") }

// RunAndFollow fails.
func (*Client) RunAndFollow(context.Context, *client.RunRequest, *FollowOutput) (client.Status, error) {
	return client.Status{}, stub.Err("pkg/api/client/extended.RunAndFollow")
}

// CloseConn fails.
func (*Client) CloseConn() error { return stub.Err("pkg/api/client/extended.CloseConn") }
