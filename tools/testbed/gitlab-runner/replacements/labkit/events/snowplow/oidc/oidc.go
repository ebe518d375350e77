// Package oidc: cloud identity tokens for the emitter (gpuci.runners testbed
// REPLACEMENT; see ../../../doc.go). The source yields no token.
package oidc

import (
	"errors"

	"golang.org/x/oauth2"
)

// Option configures the token source.
type Option func(*source)

// WithSkipIfUnsupportedCloud is accepted and ignored.
func WithSkipIfUnsupportedCloud(bool) Option { return func(*source) {} }

type source struct{}

// NewSource is a token source that has no token.
func NewSource(...Option) oauth2.TokenSource { return &source{} }

func (*source) Token() (*oauth2.Token, error) {
	return nil, errors.New("no cloud identity in the gpuci.runners testbed's GitLab Runner build")
}
