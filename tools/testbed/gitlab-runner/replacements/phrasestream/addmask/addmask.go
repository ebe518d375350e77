// Package addmask is the gpuci.runners testbed's REPLACEMENT for
// gitlab.com/ajwalker/phrasestream/addmask, which the Go module proxy refuses
// (403). Upstream it masks phrases a job adds at run time, for the helper's
// experimental `proxy-exec` command. Not reached on the testbed: this build's
// helper has no proxy-exec, and job log masking is GitLab Runner's own code.
// New fails with a clear error.
package addmask

import (
	"errors"
	"io"
)

// AddMask would mask added phrases in two streams.
type AddMask struct{}

// New fails: see the package comment.
func New(_ any, _ io.Writer, _ io.Writer) (*AddMask, error) {
	return nil, errors.New("phrasestream/addmask is replaced by a stand-in in the gpuci.runners testbed build")
}

// Get returns the nth stream (never reached: New fails).
func (*AddMask) Get(int) io.Writer { return io.Discard }

// Close has nothing to close.
func (*AddMask) Close() error { return nil }
