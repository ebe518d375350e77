// Package gracefulexitcmd: a command that is asked to stop before it is killed
// (gpuci.runners testbed REPLACEMENT; see ../../../doc.go). It behaves: on
// cancellation the process gets SIGTERM, and SIGKILL after the delay.
package gracefulexitcmd

import (
	"context"
	"os/exec"
	"syscall"
	"time"
)

// Cmd is an os/exec command.
type Cmd = exec.Cmd

// New is exec.CommandContext with a graceful stop: SIGTERM first, then the delay.
func New(ctx context.Context, delay time.Duration, name string, args ...string) *Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = delay
	return cmd
}
