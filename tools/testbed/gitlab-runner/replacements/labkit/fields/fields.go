// Package fields: standard log field names (gpuci.runners testbed REPLACEMENT; see ../doc.go).
package fields

const (
	// HTTPStatusCode is the field of an HTTP response's status code.
	HTTPStatusCode = "status"
	// DurationS is the field of a duration in seconds.
	DurationS = "duration_s"
)

// Field is a deprecated alias's standard name.
type Field struct {
	Standard string
}

// Deprecated maps legacy aliases to their standard names: empty, so every
// field keeps the name the caller gives it.
var Deprecated = map[string]Field{}

// VariantVersion is the schema version that introduced a standard name: empty (version 0).
var VariantVersion = map[string]int{}
