// Stand-in for gitlab.com/gitlab-org/moa@v0.0.0-20251209091627-66342f721c88 (package ast), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package ast

import "gitlab.com/gitlab-org/moa/internal/stub"

// Expr is a parsed expression.
type Expr interface {
	Walk(Visitor) (Expr, error)
}

// Visitor walks an expression tree.
type Visitor interface {
	Enter(Expr) (Visitor, error)
	Exit(Expr) (Expr, error)
}

// Template is a template expression (text with ${{ }} interpolations).
type Template struct{}

// Walk fails (no template is ever parsed in this build).
func (*Template) Walk(Visitor) (Expr, error) { return nil, stub.Err("ast.Template.Walk") }
