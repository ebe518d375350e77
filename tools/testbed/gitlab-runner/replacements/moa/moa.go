// Package moa is the gpuci.runners testbed's REPLACEMENT for
// gitlab.com/gitlab-org/moa (GitLab's CI expression language), which the Go
// module proxy refuses (403). It is not moa.
//
// Reached on the testbed only when a job carries non-empty `inputs`: text
// without ${{ }} parses to a literal and comes back unchanged; text with an
// interpolation fails to parse with a clear error (the job fails, no panic).
// The value package (value/) holds job input values faithfully.
package moa

import (
	"fmt"
	"strings"

	"gitlab.com/gitlab-org/moa/ast"
)

const interpolationStart = "${{"

// ParseTemplate parses literal text; an interpolation is refused.
func ParseTemplate(text string) (ast.Expr, error) {
	if strings.Contains(text, interpolationStart) {
		return nil, fmt.Errorf("%q: ${{ }} interpolation is not available in the gpuci.runners testbed's GitLab "+
			"Runner build (gitlab.com/gitlab-org/moa is replaced by a stand-in)", text)
	}
	return &ast.Literal{Text: text}, nil
}

// EscapeTemplate makes text parse as itself: each ${{ is written $${{.
func EscapeTemplate(text string) string {
	return strings.ReplaceAll(text, interpolationStart, "$"+interpolationStart)
}
