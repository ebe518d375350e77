// Stand-in for gitlab.com/gitlab-org/step-runner@v0.29.0 (package pkg/api/expression), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package expression

import (
	"gitlab.com/gitlab-org/moa/ast"
	"gitlab.com/gitlab-org/moa/value"

	"gitlab.com/gitlab-org/step-runner/internal/stub"
)

// Sensitive marks a value that must not be interpolated into scripts.
const Sensitive uint16 = 1

// Input is a named job input.
type Input struct {
	Key   string
	Value value.Value
}

// Evaluator would evaluate job-input expressions; Eval fails.
type Evaluator struct{}

// NewEvaluator returns an evaluator whose Eval fails. Building one succeeds,
// because gitlab-runner builds it for every job payload that has an `inputs`
// key (even an empty one); a job whose inputs are interpolated fails in Eval.
func NewEvaluator(value.Value) (*Evaluator, error) { return &Evaluator{}, nil }

// Eval fails: job inputs interpolation does not work in this build.
func (*Evaluator) Eval(string, ast.Expr) (value.Value, error) {
	return value.Null(), stub.Err("pkg/api/expression.Evaluator.Eval (job inputs interpolation; " +
		"FF_ENABLE_JOB_INPUTS_INTERPOLATION=false turns it off)")
}
