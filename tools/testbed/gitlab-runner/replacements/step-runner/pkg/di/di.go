// Package di: step-runner's service container (gpuci.runners testbed REPLACEMENT;
// see ../../doc.go). StepRunnerService answers steprunner.ErrNotAvailable, so
// the `steps` command stops with that message.
package di

import (
	"log/slog"

	steprunner "gitlab.com/gitlab-org/step-runner"
	"gitlab.com/gitlab-org/step-runner/pkg/runner"
	"gitlab.com/gitlab-org/step-runner/proto"
)

// Container would wire a step-runner service.
type Container struct{}

// NewContainer applies the options to an empty container.
func NewContainer(options ...func(*Container)) *Container {
	c := &Container{}
	for _, option := range options {
		option(c)
	}
	return c
}

// WithBuiltinFunc is accepted and ignored.
func WithBuiltinFunc(string, runner.BuiltinFunction) func(*Container) { return func(*Container) {} }

// WithOperatorLogger is accepted and ignored.
func WithOperatorLogger(*slog.Logger) func(*Container) { return func(*Container) {} }

// StepRunnerService fails: there is no step-runner in this build.
func (*Container) StepRunnerService() (proto.StepRunnerServer, error) {
	return nil, steprunner.ErrNotAvailable
}
