package jsoncpp

import (
	"math"
	"sort"
)

type Kind uint8

const (
	Null Kind = iota
	Bool
	Int    // jsoncpp intValue: every integer literal that fits int64
	Uint   // jsoncpp uintValue: integer literals above MaxInt64 that fit uint64
	Real   // jsoncpp realValue: literals with '.' or an exponent, or too large for uint64
	String // bytes, not necessarily UTF-8
	Array
	Object
)

// Value is a parsed JSON value, with the distinctions jsoncpp makes.
type Value struct {
	Kind    Kind
	Boolean bool
	Int64   int64
	Uint64  uint64
	Float   float64
	Str     string // bytes, not necessarily UTF-8
	Arr     []Value
	Obj     []Member // sorted by name bytes (jsoncpp's std::map order), names unique
}

type Member struct {
	Name  string
	Value Value
}

// IsUInt is jsoncpp's Value::isUInt: a value that converts to uint32 exactly.
func (v *Value) IsUInt() bool {
	switch v.Kind {
	case Int:
		return v.Int64 >= 0 && v.Int64 <= math.MaxUint32
	case Uint:
		return v.Uint64 <= math.MaxUint32
	case Real:
		return v.Float >= 0 && v.Float <= math.MaxUint32 && isIntegral(v.Float)
	}
	return false
}

// IsUInt64 is jsoncpp's Value::isUInt64: a value that converts to uint64
// exactly (a double must be below 2^64, which uint64 max rounds up to).
func (v *Value) IsUInt64() bool {
	switch v.Kind {
	case Int:
		return v.Int64 >= 0
	case Uint:
		return true
	case Real:
		return v.Float >= 0 && v.Float < 18446744073709551616.0 && isIntegral(v.Float)
	}
	return false
}

// IsInt64 is jsoncpp's Value::isInt64: a value that converts to int64
// exactly (a double must be below 2^63, which int64 max rounds up to).
func (v *Value) IsInt64() bool {
	switch v.Kind {
	case Int:
		return true
	case Uint:
		return v.Uint64 <= math.MaxInt64
	case Real:
		return v.Float >= -9223372036854775808.0 && v.Float < 9223372036854775808.0 && isIntegral(v.Float)
	}
	return false
}

// AsInt64 converts a value for which IsInt64 holds.
func (v *Value) AsInt64() int64 {
	switch v.Kind {
	case Int:
		return v.Int64
	case Uint:
		return int64(v.Uint64)
	case Real:
		return int64(v.Float)
	}
	return 0
}

// AsUInt64 converts a value for which IsUInt64 holds.
func (v *Value) AsUInt64() uint64 {
	switch v.Kind {
	case Int:
		return uint64(v.Int64)
	case Uint:
		return v.Uint64
	case Real:
		return uint64(v.Float)
	}
	return 0
}

func isIntegral(f float64) bool {
	_, frac := math.Modf(f)
	return frac == 0
}

// Get returns the value of the object member name.
func (v *Value) Get(name string) (*Value, bool) {
	i := sort.Search(len(v.Obj), func(i int) bool { return v.Obj[i].Name >= name })
	if i < len(v.Obj) && v.Obj[i].Name == name {
		return &v.Obj[i].Value, true
	}
	return nil, false
}

// Set sets (or replaces) an object member, keeping the members sorted:
// how a writer builds the object jsoncpp's writer sorts.
func (v *Value) Set(name string, value Value) { v.setMember(name, value) }

// setMember sets (or, as jsoncpp does for a repeated name, replaces) a member.
func (v *Value) setMember(name string, value Value) {
	i := sort.Search(len(v.Obj), func(i int) bool { return v.Obj[i].Name >= name })
	if i < len(v.Obj) && v.Obj[i].Name == name {
		v.Obj[i].Value = value
		return
	}
	v.Obj = append(v.Obj, Member{})
	copy(v.Obj[i+1:], v.Obj[i:])
	v.Obj[i] = Member{Name: name, Value: value}
}
