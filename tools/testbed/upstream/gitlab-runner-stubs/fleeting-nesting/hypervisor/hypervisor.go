// Stand-in for gitlab.com/gitlab-org/fleeting/nesting@v0.4.0 (package hypervisor), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package hypervisor

// VirtualMachine is a nesting VM.
type VirtualMachine interface {
	GetId() string
	GetAddr() string
}
