// Stand-in for gitlab.com/gitlab-org/step-runner@v0.29.0 (package pkg/api), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package api

import (
	"net"
	"os"
	"path/filepath"
)

// DefaultSocketPath is where `gitlab-runner steps serve` listens by default.
// It is a plain path (the CLI asks for it when it starts); serving fails later.
func DefaultSocketPath() string { return filepath.Join(os.TempDir(), "step-runner.sock") }

// SocketAddr is the unix address of a socket path.
func SocketAddr(path string) *net.UnixAddr { return &net.UnixAddr{Name: path, Net: "unix"} }
