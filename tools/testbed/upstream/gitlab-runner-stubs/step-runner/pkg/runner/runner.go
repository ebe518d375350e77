// Stand-in for gitlab.com/gitlab-org/step-runner@v0.29.0 (package pkg/runner), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package runner

import (
	"io"

	"google.golang.org/protobuf/types/known/structpb"

	"gitlab.com/gitlab-org/step-runner/internal/stub"
	"gitlab.com/gitlab-org/step-runner/proto"
)

// Kind is the expected kind of a step input.
type Kind int

const (
	KindAny Kind = iota
	KindString
	KindNumber
	KindBool
	KindStruct
	KindList
)

// View is what a step sees of the job.
type View struct {
	Vars map[string]*structpb.Value
}

// StepsContext is handed to a step function by step-runner; this build never
// makes one, and every method fails.
type StepsContext struct{}

func (*StepsContext) GetInput(string, Kind) (*structpb.Value, error) {
	return nil, stub.Err("pkg/runner.StepsContext.GetInput")
}

func (*StepsContext) GetInputWithDefault(string, Kind, map[string]*proto.Spec_Content_Input) (*structpb.Value, error) {
	return nil, stub.Err("pkg/runner.StepsContext.GetInputWithDefault")
}

func (*StepsContext) Pipe() (io.Writer, io.Writer) {
	stub.Panic("pkg/runner.StepsContext.Pipe")
	return nil, nil
}

func (*StepsContext) GetEnvList() []string {
	stub.Panic("pkg/runner.StepsContext.GetEnvList")
	return nil
}

func (*StepsContext) WorkDir() string {
	stub.Panic("pkg/runner.StepsContext.WorkDir")
	return ""
}

func (*StepsContext) View() *View {
	stub.Panic("pkg/runner.StepsContext.View")
	return nil
}
