// Stand-in for gitlab.com/gitlab-org/moa@v0.0.0-20251209091627-66342f721c88 (package internal/stub), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package stub

import "errors"

// Err is the error every stubbed moa entry point returns.
func Err(what string) error {
	return errors.New("gitlab.com/gitlab-org/moa " + what +
		": stubbed in the gpuci testbed build (the module is not on the Go module proxy);" +
		" job inputs interpolation does not work in this build (FF_ENABLE_JOB_INPUTS_INTERPOLATION=false turns it off)")
}
