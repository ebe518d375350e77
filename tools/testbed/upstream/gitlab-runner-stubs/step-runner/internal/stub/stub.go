// Stand-in for gitlab.com/gitlab-org/step-runner@v0.29.0 (package internal/stub), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package stub

import "errors"

// Err is the error every stubbed step-runner entry point returns.
func Err(what string) error {
	return errors.New("gitlab.com/gitlab-org/step-runner " + what +
		": stubbed in the gpuci testbed build (the module is not on the Go module proxy);" +
		" CI steps (the `run` keyword, FF_USE_NATIVE_STEPS, FF_USE_SCRIPT_TO_STEP_MIGRATION) do not work in this build")
}

// Panic stops a call that has no error to return.
func Panic(what string) { panic(Err(what)) }
