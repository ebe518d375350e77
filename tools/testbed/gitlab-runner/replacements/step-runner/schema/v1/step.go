// Package schema: the shape of a CI step as GitLab Runner passes steps around
// (gpuci.runners testbed REPLACEMENT; see ../../doc.go). Only decoding and
// encoding: a job whose steps would run fails with steprunner.ErrNotAvailable.
package schema

// StepInputs are a step's named inputs.
type StepInputs map[string]any

// Step is one step of a `run:` job.
type Step struct {
	Name   *string           `json:"name,omitempty" yaml:"name,omitempty"`
	Step   string            `json:"step,omitempty" yaml:"step,omitempty"`
	Script string            `json:"script,omitempty" yaml:"script,omitempty"`
	Inputs StepInputs        `json:"inputs,omitempty" yaml:"inputs,omitempty"`
	Env    map[string]string `json:"env,omitempty" yaml:"env,omitempty"`
	Run    []Step            `json:"run,omitempty" yaml:"run,omitempty"`
}
