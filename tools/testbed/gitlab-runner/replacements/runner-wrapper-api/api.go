// Package api is the gpuci.runners testbed's REPLACEMENT for GitLab Runner's
// runner_wrapper API (the gRPC interface of `gitlab-runner wrapper`, which
// supervises a runner process for autoscaling fleets). Not reached on the
// testbed: the chart's manager runs `gitlab-runner run` directly, and this
// build's command list has no `wrapper`. The types let the wrapper package
// compile; a graceful-shutdown callback is logged and not sent.
package api

import (
	"context"
	"errors"

	"github.com/sirupsen/logrus"
)

// Status is the wrapped process's state.
type Status int

const (
	StatusUnknown Status = iota
	StatusRunning
	StatusInShutdown
	StatusStopped
)

func (s Status) String() string {
	return [...]string{"unknown", "running", "in shutdown", "stopped"}[s]
}

// ErrProcessNotInitialized: the wrapped process has not started.
var ErrProcessNotInitialized = errors.New("process not initialized")

// ShutdownCallbackDef is where a shutdown callback would be sent.
type ShutdownCallbackDef interface {
	URL() string
	Method() string
}

// InitGracefulShutdownRequest asks for a graceful shutdown.
type InitGracefulShutdownRequest interface {
	ShutdownCallbackDef() ShutdownCallbackDef
}

// ShutdownCallback is run once the wrapped process stopped.
type ShutdownCallback interface {
	Run(ctx context.Context)
}

type loggedCallback struct {
	log logrus.FieldLogger
	def ShutdownCallbackDef
}

// NewShutdownCallback logs instead of calling back.
func NewShutdownCallback(log logrus.FieldLogger, def ShutdownCallbackDef) ShutdownCallback {
	return &loggedCallback{log: log, def: def}
}

func (c *loggedCallback) Run(context.Context) {
	c.log.WithField("target", c.def.URL()).Warn("shutdown callbacks are not sent by the gpuci.runners testbed build")
}
