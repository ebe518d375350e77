// Stand-in for gitlab.com/gitlab-org/moa@v0.0.0-20251209091627-66342f721c88 (package value), which the Go module proxy
// does not serve, written for the gpuci testbed's source build of
// gitlab-runner v18.9.0 (tools/testbed/upstream/gitlab-runner.sh). It is not
// upstream code: it declares only the names gitlab-runner compiles against,
// and whatever would run the real module's code returns an error (or panics)
// saying "stubbed in the gpuci testbed build".
package value

import (
	"bytes"
	"encoding/json"
	"errors"
	"iter"
	"strconv"
)

// Kind is the kind of a value.
type Kind uint8

const (
	NullKind Kind = iota
	BoolKind
	NumberKind
	StringKind
	ArrayKind
	ObjectKind
)

func (k Kind) String() string {
	switch k {
	case BoolKind:
		return "bool"
	case NumberKind:
		return "number"
	case StringKind:
		return "string"
	case ArrayKind:
		return "array"
	case ObjectKind:
		return "object"
	}
	return "null"
}

var (
	ErrAttributeNotFound = errors.New("attribute not found")
	ErrInvalidKey        = errors.New("invalid key")
)

// Mapper is an object-like value (gitlab-runner's job inputs implement it).
type Mapper interface {
	All() iter.Seq2[Value, Value]
	Attr(string) (Value, error)
	Get(Value) (Value, error)
	Keys() iter.Seq[Value]
	Len() int
	Values() iter.Seq[Value]
	WithMarks(uint16) Mapper
}

// Value holds a job input's content: its kind and the JSON it came as. This
// much is real so that a job payload with inputs is read and checked as
// upstream does (the kind must match the announced type); evaluating
// expressions over values is what fails (see the moa and expression stand-ins).
type Value struct {
	kind   Kind
	raw    json.RawMessage
	str    string
	marks  uint16
	mapper Mapper
}

func Null() Value                      { return Value{} }
func String(s string) Value            { return Value{kind: StringKind, str: s} }
func Object(m Mapper) Value            { return Value{kind: ObjectKind, mapper: m} }
func (v Value) Kind() Kind             { return v.kind }
func (v Value) HasMarks(m uint16) bool { return v.marks&m == m && m != 0 }

// WithMarks returns the value with marks added (e.g. sensitive).
func (v Value) WithMarks(m uint16) Value { v.marks |= m; return v }

// String is the value as text: a string's content, otherwise its JSON.
func (v Value) String() string {
	if v.kind == StringKind {
		return v.str
	}
	if v.raw != nil {
		return string(v.raw)
	}
	return v.kind.String()
}

// UnmarshalJSON reads a value's kind from its JSON.
func (v *Value) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return errors.New("empty value")
	}
	*v = Value{raw: append(json.RawMessage(nil), data...)}
	switch data[0] {
	case 'n':
		v.kind = NullKind
	case 't', 'f':
		v.kind = BoolKind
	case '"':
		v.kind = StringKind
		return json.Unmarshal(data, &v.str)
	case '[':
		v.kind = ArrayKind
	case '{':
		v.kind = ObjectKind
	default:
		if _, err := strconv.ParseFloat(string(data), 64); err != nil {
			return err
		}
		v.kind = NumberKind
	}
	if !json.Valid(data) {
		return errors.New("invalid JSON value")
	}
	return nil
}

// MarshalJSON writes the value back as it came.
func (v Value) MarshalJSON() ([]byte, error) {
	switch {
	case v.raw != nil:
		return v.raw, nil
	case v.kind == StringKind:
		return json.Marshal(v.str)
	}
	return []byte("null"), nil
}
