// Stand-in for gitlab.com/gitlab-org/fleeting/taskscaler@v0.0.0-20251222171709-fd7a3aca1450 (package taskscaler), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package taskscaler

import (
	"context"
	"errors"
	"time"

	"gitlab.com/gitlab-org/fleeting/fleeting"
	fleetingprovider "gitlab.com/gitlab-org/fleeting/fleeting/provider"

	"gitlab.com/gitlab-org/fleeting/taskscaler/internal/stub"
)

// ErrNoCapacity: no capacity left to reserve.
var ErrNoCapacity = errors.New("no capacity")

// Taskscaler schedules tasks on fleeting instances.
type Taskscaler interface {
	Acquire(ctx context.Context, key string) (Acquisition, error)
	Release(key string)
	Reserve(key string) error
	Unreserve(key string)
	ConfigureSchedule(schedules ...Schedule) error
	MetricsCollector() any
	FleetingMetricsCollector() any
	Shutdown(ctx context.Context)
}

// Acquisition is a task's hold on an instance.
type Acquisition interface {
	Slot() int
	WithContext(ctx context.Context) (context.Context, context.CancelFunc)
	InstanceConnectInfo(ctx context.Context) (fleetingprovider.ConnectInfo, error)
}

// Schedule is an autoscaling policy period.
type Schedule struct {
	Periods          []string
	Timezone         string
	IdleCount        int
	IdleTime         time.Duration
	ScaleFactor      float64
	ScaleFactorLimit int
	PreemptiveMode   bool
}

// UpFuncInstance describes an instance that came up.
type UpFuncInstance struct {
	Acquisitions []string
	Cause        fleeting.Cause
	Restored     bool
	Info         fleetingprovider.ConnectInfo
}

// UpFunc readies an instance that came up.
type UpFunc func(Taskscaler, UpFuncInstance) error

// HeartbeatFunc checks an instance.
type HeartbeatFunc func(context.Context, fleetingprovider.ConnectInfo) error

// Option configures New. The options record nothing: New fails.
type Option func()

func option() Option { return func() {} }

func WithReservations() Option                                   { return option() }
func WithReservationThrottling() Option                          { return option() }
func WithDeleteInstancesOnShutdown() Option                      { return option() }
func WithCapacityPerInstance(int) Option                         { return option() }
func WithMaxUseCount(int) Option                                 { return option() }
func WithMaxInstances(int) Option                                { return option() }
func WithInstanceGroupSettings(fleetingprovider.Settings) Option { return option() }
func WithMetricsCollector(any) Option                            { return option() }
func WithFleetingMetricsCollector(any) Option                    { return option() }
func WithInstanceUpFunc(UpFunc) Option                           { return option() }
func WithHeartbeatFunc(HeartbeatFunc) Option                     { return option() }
func WithUpdateInterval(time.Duration) Option                    { return option() }
func WithUpdateIntervalWhenExpecting(time.Duration) Option       { return option() }
func WithDeletionRetryInterval(time.Duration) Option             { return option() }
func WithShutdownDeletionInterval(time.Duration) Option          { return option() }
func WithShutdownDeletionRetries(int) Option                     { return option() }
func WithFailureThreshold(int) Option                            { return option() }
func WithLogger(any) Option                                      { return option() }
func WithScaleThrottle(limit, burst int) Option                  { return option() }
func WithStorage(any) Option                                     { return option() }

// New fails: there is no task scaler in this build.
func New(context.Context, fleetingprovider.InstanceGroup, ...Option) (Taskscaler, error) {
	return nil, stub.Err("New")
}
