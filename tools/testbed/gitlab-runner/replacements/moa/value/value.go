// Package value: moa's values (gpuci.runners testbed REPLACEMENT; see ../moa.go).
// Job inputs arrive as JSON; a Value keeps the decoded content and its kind,
// so GitLab Runner's input validation (kind checks, null checks) behaves.
package value

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
)

// Kind is a value's type.
type Kind int

const (
	NullKind Kind = iota
	BoolKind
	NumberKind
	StringKind
	ArrayKind
	ObjectKind
)

func (k Kind) String() string {
	return [...]string{"null", "bool", "number", "string", "array", "object"}[k]
}

var (
	ErrAttributeNotFound = errors.New("attribute not found")
	ErrInvalidKey        = errors.New("invalid key")
)

// Mapper is an object whose attributes are values.
type Mapper interface {
	All() iter.Seq2[Value, Value]
	Attr(name string) (Value, error)
	Get(key Value) (Value, error)
	Keys() iter.Seq[Value]
	Len() int
	Values() iter.Seq[Value]
	WithMarks(marks uint16) Mapper
}

// Value is a decoded JSON value, an object, and marks (e.g. sensitive).
type Value struct {
	kind   Kind
	data   any
	object Mapper
	marks  uint16
}

// Null is the null value.
func Null() Value { return Value{} }

// String is a string value.
func String(s string) Value { return Value{kind: StringKind, data: s} }

// Object wraps a Mapper.
func Object(m Mapper) Value { return Value{kind: ObjectKind, object: m} }

// Kind is the value's type.
func (v Value) Kind() Kind { return v.kind }

// WithMarks adds marks.
func (v Value) WithMarks(marks uint16) Value { v.marks |= marks; return v }

// HasMarks tells whether all of marks are set.
func (v Value) HasMarks(marks uint16) bool { return v.marks&marks == marks }

// String is the value as text (a string as it is, anything else as JSON).
func (v Value) String() string {
	if s, ok := v.data.(string); ok {
		return s
	}
	encoded, err := json.Marshal(v.data)
	if err != nil {
		return fmt.Sprint(v.data)
	}
	return string(encoded)
}

// UnmarshalJSON decodes any JSON value and records its kind.
func (v *Value) UnmarshalJSON(data []byte) error {
	var decoded any
	if err := json.Unmarshal(data, &decoded); err != nil {
		return err
	}
	*v = Value{kind: kindOf(decoded), data: decoded}
	return nil
}

// MarshalJSON encodes the decoded content.
func (v Value) MarshalJSON() ([]byte, error) { return json.Marshal(v.data) }

func kindOf(decoded any) Kind {
	switch decoded.(type) {
	case bool:
		return BoolKind
	case float64:
		return NumberKind
	case string:
		return StringKind
	case []any:
		return ArrayKind
	case map[string]any:
		return ObjectKind
	}
	return NullKind
}
