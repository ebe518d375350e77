// Stand-in for gitlab.com/gitlab-org/fleeting/fleeting/metrics/prometheus@v0.0.0-20260107152956-5ca76afe7ef3 (package prometheus), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package prometheus

// Option configures New (recorded nowhere).
type Option func()

func option() Option { return func() {} }

func WithConstLabels(map[string]string) Option          { return option() }
func WithInstanceCreationTimeBuckets([]float64) Option  { return option() }
func WithInstanceIsRunningTimeBuckets([]float64) Option { return option() }
func WithInstanceDeletionTimeBuckets([]float64) Option  { return option() }
func WithInstanceLifeDurationBuckets([]float64) Option  { return option() }

// Collector would collect the metrics. New returns one, because gitlab-runner
// builds it before the task scaler (whose New fails); using it panics.
type Collector struct{}

// New returns a collector that is never used in this build.
func New(...Option) *Collector { return &Collector{} }

// Describe panics.
func (*Collector) Describe(any) {
	panic("gitlab.com/gitlab-org/fleeting/fleeting/metrics/prometheus: stubbed in the gpuci testbed build (the module is not on the Go module proxy)")
}
