// Package runner: the interface of step-runner's builtin functions (gpuci.runners
// testbed REPLACEMENT; see ../../doc.go). GitLab Runner implements builtins
// against it; with no step-runner in this build none is ever called.
package runner

import (
	"context"
	"io"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"gitlab.com/gitlab-org/step-runner/proto"
)

// Kind is the type an input is read as.
type Kind int

const (
	KindString Kind = iota
	KindBool
	KindList
)

// BuiltinResult is what a builtin returns besides an error.
type BuiltinResult struct{}

// BuiltinContext is what a builtin reads its inputs and environment from.
type BuiltinContext interface {
	GetInput(name string, kind Kind) (*structpb.Value, error)
	GetInputWithDefault(name string, kind Kind, spec map[string]*proto.Spec_Content_Input) (*structpb.Value, error)
	GetJobVars() map[string]*structpb.Value
	GetEnvs() map[string]string
	GetEnvList() []string
	Pipe() (stdout, stderr io.Writer)
	WorkDir() string
	GracefulExitDelay() time.Duration
	ListenCancel(ctx context.Context) (context.Context, context.CancelFunc)
}

// BuiltinFunction is a step implemented in Go.
type BuiltinFunction interface {
	Spec() *proto.Spec
	Run(ctx context.Context, builtinCtx BuiltinContext) (BuiltinResult, error)
}
