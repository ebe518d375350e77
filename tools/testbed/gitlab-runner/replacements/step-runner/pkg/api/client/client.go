// Package client: step-runner's request and status types (gpuci.runners testbed
// REPLACEMENT; see ../../../doc.go). Plain data; nothing here runs steps.
package client

import "time"

// State is a step run's state.
type State int

const (
	StateUnknown State = iota
	StateRunning
	StateSuccess
	StateFailure
	StateCancelled
)

func (s State) String() string {
	return [...]string{"unknown", "running", "success", "failure", "cancelled"}[s]
}

// ErrorKind classifies a failed run.
type ErrorKind int

const (
	ErrorUnknown ErrorKind = iota
	ErrorInternal
	ErrorStepFailure
	ErrorCancelled
	ErrorTimeout
)

// Status is what a run ended with.
type Status struct {
	Id        string
	State     State
	Message   string
	ErrorKind ErrorKind
	ExitCode  int
}

// Variable is a job variable handed to a run.
type Variable struct {
	Key    string
	Value  string
	File   bool
	Masked bool
}

// RunRequest asks a step-runner to run steps.
type RunRequest struct {
	Id        string
	Timeout   *time.Duration
	WorkDir   string
	BuildDir  string
	Env       map[string]string
	Steps     string
	Variables []Variable
}
