// Package proxy: step-runner's stdio proxy (gpuci.runners testbed REPLACEMENT; see ../../../doc.go).
package proxy

import (
	"io"

	steprunner "gitlab.com/gitlab-org/step-runner"
)

// Proxy fails: there is no step-runner to proxy to in this build.
func Proxy(_ io.Reader, _ io.Writer, _ io.ReadWriteCloser) error { return steprunner.ErrNotAvailable }
