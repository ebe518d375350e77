// Package steprunner is the gpuci.runners testbed's REPLACEMENT for
// gitlab.com/gitlab-org/step-runner (GitLab's native CI steps runner), which
// the Go module proxy refuses (403). It is not step-runner.
//
// It provides only the symbols GitLab Runner's packages compile against.
// Reached on the testbed (a plain job through the Kubernetes executor):
//   - pkg/api.DefaultSocketPath, read while the runner builds its command
//     list: returns step-runner's documented default socket path;
//   - pkg/api/expression, when a job payload carries `inputs`: inputs are
//     kept and read back; interpolating them (${{ inputs.x }}) fails with
//     ErrNotAvailable (see ../moa).
//
// Everything that runs native steps (`run:` jobs, FF_USE_NATIVE_STEPS, the
// `steps` helper command) answers ErrNotAvailable: such a job fails with that
// message instead of running, never with a panic.
package steprunner

import "errors"

// ErrNotAvailable is what every native-steps entry point of this replacement returns.
var ErrNotAvailable = errors.New("native CI steps are not available in the gpuci.runners testbed's GitLab Runner build: " +
	"gitlab.com/gitlab-org/step-runner is not served by the Go module proxy, so it is replaced by a stand-in " +
	"(tools/testbed/gitlab-runner/replacements/step-runner)")
