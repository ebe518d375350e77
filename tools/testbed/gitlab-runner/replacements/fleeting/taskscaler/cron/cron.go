// Package cron is the gpuci.runners testbed's REPLACEMENT for
// gitlab.com/gitlab-org/fleeting/taskscaler/cron, which the Go module proxy
// refuses (403). GitLab Runner's Kubernetes executor parses autoscaler
// policy periods with it (`[runners.kubernetes.autoscaler]`, which the
// testbed never configures). It behaves for the one period the executor
// uses by default, "* * * * *" (always active); any other period fails to
// parse with a clear error, never silently.
package cron

import (
	"fmt"
	"strings"
	"time"
)

// Schedule tells whether a time falls in a period.
type Schedule interface {
	Contains(t time.Time) bool
}

type always struct{}

func (always) Contains(time.Time) bool { return true }

// Parse accepts "* * * * *" only.
func Parse(period, _ string) (Schedule, error) {
	if strings.Join(strings.Fields(period), " ") == "* * * * *" {
		return always{}, nil
	}
	return nil, fmt.Errorf("cron period %q: only \"* * * * *\" is supported by the gpuci.runners testbed's "+
		"GitLab Runner build (fleeting/taskscaler is replaced by a stand-in)", period)
}
