// Stand-in for gitlab.com/gitlab-org/step-runner@v0.29.0 (package pkg/api/proxy), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package proxy

import (
	"io"
	"net"

	"gitlab.com/gitlab-org/step-runner/internal/stub"
)

// Proxy fails: `gitlab-runner steps proxy` does not work in this build.
func Proxy(io.Reader, io.Writer, net.Conn) error { return stub.Err("pkg/api/proxy.Proxy") }
