package batchsnap

import (
	"github.com/oplogha/oplogha/impl/contract/jsoncpp"
)

// The member readers of upstream's metadata decoders (metadata.cpp
// GetString, GetUInt32, GetUInt64, GetInt64): a missing member, or one
// jsoncpp's isString/isUInt/isUInt64/isInt64 refuses, is the reason
// "field must be <type>: <name>". Integral doubles pass ("1.0", "1e3").

// fields reads the members of one JSON object, keeping the first failure.
type fields struct {
	obj    *jsoncpp.Value
	reason string
}

func (f *fields) get(name string) *jsoncpp.Value {
	if f.reason != "" {
		return nil
	}
	v, _ := f.obj.Get(name)
	return v
}

func (f *fields) str(name string) string {
	v := f.get(name)
	if f.reason != "" {
		return ""
	}
	if v == nil || v.Kind != jsoncpp.String {
		f.reason = "field must be a string: " + name
		return ""
	}
	return v.Str
}

func (f *fields) u32(name string) uint32 {
	v := f.get(name)
	if f.reason != "" {
		return 0
	}
	if v == nil || !v.IsUInt() {
		f.reason = "field must be uint32: " + name
		return 0
	}
	return uint32(v.AsUInt64())
}

func (f *fields) u64(name string) uint64 {
	v := f.get(name)
	if f.reason != "" {
		return 0
	}
	if v == nil || !v.IsUInt64() {
		f.reason = "field must be uint64: " + name
		return 0
	}
	return v.AsUInt64()
}

func (f *fields) i64(name string) int64 {
	v := f.get(name)
	if f.reason != "" {
		return 0
	}
	if v == nil || !v.IsInt64() {
		f.reason = "field must be int64: " + name
		return 0
	}
	return v.AsInt64()
}

// parseObject is metadata.cpp ParseJson: jsoncpp with the strict settings
// (jsoncpp.ParseStrict), then "snapshot metadata must be a JSON object".
func parseObject(data []byte) (jsoncpp.Value, error) {
	root, perr := jsoncpp.ParseStrict(data)
	if perr != nil {
		return jsoncpp.Value{}, fail(ErrMalformed, perr.Reason())
	}
	if root.Kind != jsoncpp.Object {
		return jsoncpp.Value{}, fail(ErrMalformed, "snapshot metadata must be a JSON object")
	}
	return root, nil
}

func str(s string) jsoncpp.Value { return jsoncpp.Value{Kind: jsoncpp.String, Str: s} }

func u64(v uint64) jsoncpp.Value {
	if v > 1<<63-1 {
		return jsoncpp.Value{Kind: jsoncpp.Uint, Uint64: v}
	}
	return jsoncpp.Value{Kind: jsoncpp.Int, Int64: int64(v)}
}

func i64(v int64) jsoncpp.Value { return jsoncpp.Value{Kind: jsoncpp.Int, Int64: v} }
