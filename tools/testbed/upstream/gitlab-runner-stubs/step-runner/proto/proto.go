// Stand-in for gitlab.com/gitlab-org/step-runner@v0.29.0 (package proto), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package proto

import (
	"google.golang.org/protobuf/types/known/structpb"

	"gitlab.com/gitlab-org/step-runner/internal/stub"
)

// ValueType is the type of a step input.
type ValueType int32

const (
	ValueType_raw_string ValueType = 0
	ValueType_string     ValueType = 1
	ValueType_number     ValueType = 2
	ValueType_boolean    ValueType = 3
	ValueType_struct     ValueType = 4
	ValueType_array      ValueType = 5
)

// Spec is a step's specification.
type Spec struct {
	Spec *Spec_Content
}

// GetSpec returns the content (nil-safe, like generated protobuf getters).
func (x *Spec) GetSpec() *Spec_Content {
	if x == nil {
		return nil
	}
	return x.Spec
}

// Spec_Content holds a step's inputs.
type Spec_Content struct {
	Inputs map[string]*Spec_Content_Input
}

// GetInputs returns the inputs (nil-safe).
func (x *Spec_Content) GetInputs() map[string]*Spec_Content_Input {
	if x == nil {
		return nil
	}
	return x.Inputs
}

// Spec_Content_Input is one input of a step.
type Spec_Content_Input struct {
	Type      ValueType
	Default   *structpb.Value
	Sensitive bool
}

// StepResult is the result of a step.
type StepResult struct{}

// StepRunnerServer is step-runner's gRPC service.
type StepRunnerServer interface{}

// RegisterStepRunnerServer panics: there is no step-runner service in this build.
func RegisterStepRunnerServer(any, StepRunnerServer) { stub.Panic("proto.RegisterStepRunnerServer") }
