// Stand-in for gitlab.com/gitlab-org/step-runner@v0.29.0 (package pkg/api/client), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package client

import (
	"time"

	"gitlab.com/gitlab-org/step-runner/proto"
)

// State is the state of a steps run.
type State int32

const (
	StateUnspecified State = 0
	StateRunning     State = 1
	StateSuccess     State = 2
	StateFailure     State = 3
	StateCancelled   State = 4
)

// Status is the outcome of a steps run.
type Status struct {
	Id        string
	Message   string
	State     State
	StartTime time.Time
	EndTime   time.Time
	Result    *proto.StepResult
}

// Variable is a job variable handed to the steps.
type Variable struct {
	Key    string
	Value  string
	File   bool
	Masked bool
}

// RunRequest asks step-runner to run steps.
type RunRequest struct {
	Id        string
	Timeout   *time.Duration
	WorkDir   string
	BuildDir  string
	Env       map[string]string
	Steps     string
	Variables []Variable
}
