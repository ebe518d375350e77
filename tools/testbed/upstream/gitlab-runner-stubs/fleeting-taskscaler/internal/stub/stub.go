// Stand-in for gitlab.com/gitlab-org/fleeting/taskscaler@v0.0.0-20251222171709-fd7a3aca1450 (package internal/stub), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package stub

import "errors"

// Err is the error every stubbed taskscaler entry point returns.
func Err(what string) error {
	return errors.New("gitlab.com/gitlab-org/fleeting/taskscaler " + what +
		": stubbed in the gpuci testbed build (the module is not on the Go module proxy);" +
		" the docker-autoscaler and instance executors do not work in this build")
}
