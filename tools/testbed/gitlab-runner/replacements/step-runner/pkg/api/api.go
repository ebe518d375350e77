// Package api: step-runner's socket addressing (gpuci.runners testbed REPLACEMENT; see ../../doc.go).
package api

import (
	"net"
	"os"
	"path/filepath"
)

// DefaultSocketPath is where a step-runner would listen: reached at start, so it behaves.
func DefaultSocketPath() string {
	return filepath.Join(os.TempDir(), "step-runner.sock")
}

// SocketAddr is the unix address of a socket path.
func SocketAddr(path string) *net.UnixAddr {
	return &net.UnixAddr{Name: path, Net: "unix"}
}
