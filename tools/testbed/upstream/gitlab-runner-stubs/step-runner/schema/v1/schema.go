// Stand-in for gitlab.com/gitlab-org/step-runner@v0.29.0 (package schema/v1), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package schema

import "gitlab.com/gitlab-org/step-runner/internal/stub"

// StepInputs are a step's inputs by name.
type StepInputs map[string]any

// Step is a CI step (the job's `run` keyword): the fields gitlab-runner sets.
type Step struct {
	Name   *string    `json:"name,omitempty" yaml:"name,omitempty"`
	Step   string     `json:"step,omitempty" yaml:"step,omitempty"`
	Inputs StepInputs `json:"inputs,omitempty" yaml:"inputs,omitempty"`
	Run    []Step     `json:"run,omitempty" yaml:"run,omitempty"`
}

// UnmarshalJSON refuses a job's steps: a job that uses `run` fails when its
// payload is read, naming this stand-in.
func (s *Step) UnmarshalJSON([]byte) error { return stub.Err("schema/v1.Step (a job's `run` steps)") }
