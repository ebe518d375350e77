// Package snowplow: usage billing events (gpuci.runners testbed REPLACEMENT; see
// ../../doc.go). NewEmitter fails with ErrNotAvailable: no event is ever sent.
package snowplow

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/oauth2"

	"gitlab.com/gitlab-org/labkit/v2/events/snowplow/metrics"
)

// ErrNotAvailable is NewEmitter's answer in this build.
var ErrNotAvailable = errors.New("snowplow usage events are not available in the gpuci.runners testbed's GitLab " +
	"Runner build (gitlab.com/gitlab-org/labkit/v2 is replaced by a stand-in)")

// SendResult is the outcome of one batch.
type SendResult struct {
	EventCount int
	StatusCode int
	Err        error
}

// SendCallback is told the outcome of each send.
type SendCallback func(successes []SendResult, failures []SendResult)

// EmitterOption configures an emitter.
type EmitterOption func(*Emitter)

// WithCallback is accepted and ignored.
func WithCallback(SendCallback) EmitterOption { return func(*Emitter) {} }

// WithTokenSource is accepted and ignored.
func WithTokenSource(oauth2.TokenSource) EmitterOption { return func(*Emitter) {} }

// WithMetricsCollectorOptions is accepted and ignored.
func WithMetricsCollectorOptions(...metrics.CollectorOption) EmitterOption { return func(*Emitter) {} }

// Emitter would send events; this build never makes one.
type Emitter struct{}

// NewEmitter fails: see ErrNotAvailable.
func NewEmitter(string, ...EmitterOption) (*Emitter, error) { return nil, ErrNotAvailable }

// Collector is an empty metrics collector.
func (*Emitter) Collector() prometheus.Collector { return prometheus.NewRegistry() }

// BillingEventRequiredInput is a billing event's required part.
type BillingEventRequiredInput struct {
	Category      string
	EventType     string
	Realm         string
	UnitOfMeasure string
	Quantity      float64
}

// BillingEventOptionalInput is a billing event's optional part.
type BillingEventOptionalInput struct {
	Subject          string
	DeploymentType   string
	Metadata         map[string]any
	InstanceID       string
	UniqueInstanceID string
	ProjectID        int64
	NamespaceID      int64
	RootNamespaceID  int64
	OrganizationID   int64
}

// Tracker would track events through an emitter.
type Tracker struct{}

// NewTracker fails like NewEmitter.
func NewTracker(string, *Emitter) (*Tracker, error) { return nil, ErrNotAvailable }

// TrackBillingEventWithOptionalInput fails like NewEmitter.
func (*Tracker) TrackBillingEventWithOptionalInput(BillingEventRequiredInput, BillingEventOptionalInput) error {
	return ErrNotAvailable
}

// Stop has nothing to stop.
func (*Tracker) Stop() {}
