// Stand-in for gitlab.com/gitlab-org/moa@v0.0.0-20251209091627-66342f721c88 (package moa), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package moa

import (
	"gitlab.com/gitlab-org/moa/ast"
	"gitlab.com/gitlab-org/moa/internal/stub"
)

// ParseTemplate fails: gitlab-runner calls it only to interpolate a job's
// inputs (a job payload with at least one input).
func ParseTemplate(string) (ast.Expr, error) { return nil, stub.Err("ParseTemplate") }
