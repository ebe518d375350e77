// Stand-in for gitlab.com/ajwalker/phrasestream@v0.0.0-20250306164532-3b0af7cb1452 (package addmask), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package addmask

import (
	"errors"
	"io"
)

// AddMask masks secrets that a job adds at run time (proxy-exec).
type AddMask struct{}

// New fails: `gitlab-runner-helper proxy-exec` (the runner's experimental
// proxy_exec setting) does not work in this build.
func New(any, io.Writer, io.Writer) (*AddMask, error) {
	return nil, errors.New("gitlab.com/ajwalker/phrasestream/addmask.New: stubbed in the gpuci testbed build" +
		" (the module is not on the Go module proxy); the experimental proxy_exec setting does not work in this build")
}

// Get panics (no AddMask is ever made).
func (*AddMask) Get(int) io.WriteCloser {
	panic("phrasestream/addmask.Get: stubbed in the gpuci testbed build")
}

// Close panics (no AddMask is ever made).
func (*AddMask) Close() error {
	panic("phrasestream/addmask.Close: stubbed in the gpuci testbed build")
}
