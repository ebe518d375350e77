// Package metrics: the emitter's metrics options (gpuci.runners testbed REPLACEMENT; see ../../../doc.go).
package metrics

// CollectorOption configures the emitter's metrics.
type CollectorOption func(*collector)

type collector struct{}

// WithCollectorNamespace is accepted and ignored.
func WithCollectorNamespace(string) CollectorOption { return func(*collector) {} }

// WithCollectorBatchDeliveryDurationBuckets is accepted and ignored.
func WithCollectorBatchDeliveryDurationBuckets([]float64) CollectorOption { return func(*collector) {} }
