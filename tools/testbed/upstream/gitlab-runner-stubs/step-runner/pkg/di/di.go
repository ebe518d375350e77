// Stand-in for gitlab.com/gitlab-org/step-runner@v0.29.0 (package pkg/di), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package di

import (
	"context"

	"gitlab.com/gitlab-org/step-runner/internal/stub"
	"gitlab.com/gitlab-org/step-runner/pkg/runner"
	"gitlab.com/gitlab-org/step-runner/proto"
)

// StepFunc is a built-in step.
type StepFunc func(context.Context, *runner.StepsContext) error

// Option configures a Container.
type Option func(*Container)

// Container would wire up step-runner's service.
type Container struct{}

// WithStepFunc registers a built-in step (recorded nowhere: the service fails).
func WithStepFunc(string, *proto.Spec, StepFunc) Option { return func(*Container) {} }

// NewContainer returns a container whose service fails.
func NewContainer(opts ...Option) *Container {
	c := &Container{}
	for _, o := range opts {
		o(c)
	}
	return c
}

// StepRunnerService fails: `gitlab-runner steps serve` does not work in this build.
func (*Container) StepRunnerService() (proto.StepRunnerServer, error) {
	return nil, stub.Err("pkg/di.Container.StepRunnerService (`gitlab-runner steps serve`)")
}
