// Package expression: step-runner's CI expression evaluator (gpuci.runners testbed
// REPLACEMENT; see ../../../doc.go). Reached whenever a job payload carries
// `inputs` (GitLab Runner advertises job inputs, so even `[]`): making an
// evaluator succeeds, and evaluating an expression fails with a clear error,
// since interpolating ${{ }} needs the real moa and step-runner.
package expression

import (
	"fmt"

	"gitlab.com/gitlab-org/moa/ast"
	"gitlab.com/gitlab-org/moa/value"
)

// Sensitive marks a value that must not reach a job log.
const Sensitive uint16 = 1

// Input is one named job input.
type Input struct {
	Key   string
	Value value.Value
}

// Evaluator holds the inputs an expression may read.
type Evaluator struct {
	scope value.Value
}

// NewEvaluator keeps the scope; it cannot fail.
func NewEvaluator(scope value.Value) (*Evaluator, error) {
	return &Evaluator{scope: scope}, nil
}

// Eval returns literal text as it is and refuses interpolation.
func (e *Evaluator) Eval(text string, expr ast.Expr) (value.Value, error) {
	if literal, ok := expr.(*ast.Literal); ok {
		return value.String(literal.Text), nil
	}
	return value.Null(), fmt.Errorf("evaluating %q: job input interpolation is not available in the gpuci.runners "+
		"testbed's GitLab Runner build (gitlab.com/gitlab-org/step-runner and moa are replaced by stand-ins)", text)
}
