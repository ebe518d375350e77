// Package proto: the step-runner API's message types that GitLab Runner's
// builtins declare their inputs with (gpuci.runners testbed REPLACEMENT; see
// ../doc.go). Plain Go structs, not generated protobuf; no service is served.
package proto

// ValueType is an input's declared type.
type ValueType int32

const (
	ValueType_string  ValueType = 0
	ValueType_boolean ValueType = 2
	ValueType_array   ValueType = 4
)

// Spec_Content_Input declares one input of a step.
type Spec_Content_Input struct {
	Type      ValueType
	Default   any
	Sensitive bool
}

// Spec_Content is a step's declared inputs.
type Spec_Content struct {
	Inputs map[string]*Spec_Content_Input
}

// GetInputs is nil-safe, as generated protobuf getters are.
func (c *Spec_Content) GetInputs() map[string]*Spec_Content_Input {
	if c == nil {
		return nil
	}
	return c.Inputs
}

// Spec is a step's specification.
type Spec struct {
	Spec *Spec_Content
}

// GetSpec is nil-safe, as generated protobuf getters are.
func (s *Spec) GetSpec() *Spec_Content {
	if s == nil {
		return nil
	}
	return s.Spec
}

// StepRunnerServer is the step-runner gRPC service; nothing implements it here.
type StepRunnerServer interface{}

// RegisterStepRunnerServer registers nothing: there is no service in this build.
func RegisterStepRunnerServer(_ any, _ StepRunnerServer) {}
