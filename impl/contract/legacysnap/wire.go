package legacysnap

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// wire reads one msgpack document against the schema upstream's writer
// follows, one typed value at a time. Every value must have the msgpack
// type upstream writes there; a length header may not claim more elements
// or bytes than remain in the document, so a damaged or hostile header fails
// where it stands instead of allocating what it claims. Errors name the file
// and the place in it, and wrap ErrTruncated (the document ends early) or
// ErrMalformed (anything else).
type wire struct {
	r    *bytes.Reader
	d    *msgpack.Decoder
	file string
}

func newWire(file string, data []byte) *wire {
	r := bytes.NewReader(data)
	return &wire{r: r, d: msgpack.NewDecoder(r), file: file}
}

// at is where the reader stands, for errors.
func (w *wire) at() int64 { return w.r.Size() - int64(w.r.Len()) }

func (w *wire) malformed(where, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s (byte %d): %s", ErrMalformed, w.file, where, w.at(), fmt.Sprintf(format, args...))
}

func (w *wire) truncated(where, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s (byte %d): %s", ErrTruncated, w.file, where, w.at(), fmt.Sprintf(format, args...))
}

// fail classifies an error of the underlying decoder.
func (w *wire) fail(where string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return w.truncated(where, "the document ends inside a value")
	}
	return w.malformed(where, "%v", err)
}

// peek returns the code of the next value.
func (w *wire) peek(where string) (byte, error) {
	if w.r.Len() == 0 {
		return 0, w.truncated(where, "the document ends before this value")
	}
	c, err := w.d.PeekCode()
	if err != nil {
		return 0, w.fail(where, err)
	}
	return c, nil
}

// typeName names the msgpack type a code starts.
func typeName(c byte) string {
	switch {
	case c <= msgpcode.PosFixedNumHigh, c == msgpcode.Uint8, c == msgpcode.Uint16, c == msgpcode.Uint32, c == msgpcode.Uint64:
		return "an unsigned integer"
	case c >= msgpcode.NegFixedNumLow, c == msgpcode.Int8, c == msgpcode.Int16, c == msgpcode.Int32, c == msgpcode.Int64:
		return "a signed integer"
	case c == msgpcode.Nil:
		return "nil"
	case c == msgpcode.False, c == msgpcode.True:
		return "a boolean"
	case c == msgpcode.Float, c == msgpcode.Double:
		return "a float"
	case msgpcode.IsString(c):
		return "a string"
	case msgpcode.IsBin(c):
		return "binary"
	case msgpcode.IsFixedArray(c), c == msgpcode.Array16, c == msgpcode.Array32:
		return "an array"
	case msgpcode.IsFixedMap(c), c == msgpcode.Map16, c == msgpcode.Map32:
		return "a map"
	case msgpcode.IsExt(c):
		return "an extension"
	}
	return fmt.Sprintf("the invalid code 0x%02x", c)
}

func isInt(c byte) bool {
	return msgpcode.IsFixedNum(c) || (c >= msgpcode.Uint8 && c <= msgpcode.Int64)
}

func isSigned(c byte) bool {
	return c >= msgpcode.NegFixedNumLow || (c >= msgpcode.Int8 && c <= msgpcode.Int64)
}

func isArray(c byte) bool {
	return msgpcode.IsFixedArray(c) || c == msgpcode.Array16 || c == msgpcode.Array32
}
func isMap(c byte) bool  { return msgpcode.IsFixedMap(c) || c == msgpcode.Map16 || c == msgpcode.Map32 }
func isBool(c byte) bool { return c == msgpcode.False || c == msgpcode.True }

func (w *wire) want(where, what string, ok func(byte) bool) error {
	c, err := w.peek(where)
	if err != nil {
		return err
	}
	if !ok(c) {
		return w.malformed(where, "want %s, found %s", what, typeName(c))
	}
	return nil
}

// bound refuses a header claiming more elements than bytes remain (every
// element takes at least one byte).
func (w *wire) bound(where string, n int, unit string) error {
	if n > w.r.Len() {
		return w.truncated(where, "claims %d %s, %d bytes remain", n, unit, w.r.Len())
	}
	return nil
}

func (w *wire) arrayLen(where string) (int, error) {
	if err := w.want(where, "an array", isArray); err != nil {
		return 0, err
	}
	n, err := w.d.DecodeArrayLen()
	if err != nil {
		return 0, w.fail(where, err)
	}
	return n, w.bound(where, n, "elements")
}

// arrayOf reads an array header that must hold exactly n elements.
func (w *wire) arrayOf(where string, n int) error {
	got, err := w.arrayLen(where)
	if err == nil && got != n {
		err = w.malformed(where, "an array of %d elements, want %d", got, n)
	}
	return err
}

func (w *wire) mapLen(where string) (int, error) {
	if err := w.want(where, "a map", isMap); err != nil {
		return 0, err
	}
	n, err := w.d.DecodeMapLen()
	if err != nil {
		return 0, w.fail(where, err)
	}
	return n, w.bound(where, 2*n, "keys and values")
}

// raw reads the body of a string or binary value whose header is next.
func (w *wire) raw(where string) ([]byte, error) {
	n, err := w.d.DecodeBytesLen()
	if err != nil {
		return nil, w.fail(where, err)
	}
	if err := w.bound(where, n, "bytes"); err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if err := w.d.ReadFull(b); err != nil {
		return nil, w.fail(where, err)
	}
	return b, nil
}

func (w *wire) str(where string) (string, error) {
	if err := w.want(where, "a string", msgpcode.IsString); err != nil {
		return "", err
	}
	b, err := w.raw(where)
	return string(b), err
}

func (w *wire) bin(where string) ([]byte, error) {
	if err := w.want(where, "binary", msgpcode.IsBin); err != nil {
		return nil, err
	}
	return w.raw(where)
}

// uint reads a non-negative integer (any integer encoding, as msgpack-cxx
// judges by value) no larger than hi.
func (w *wire) uint(where string, hi uint64) (uint64, error) {
	c, err := w.peek(where)
	if err != nil {
		return 0, err
	}
	if !isInt(c) {
		return 0, w.malformed(where, "want an unsigned integer, found %s", typeName(c))
	}
	var v uint64
	if isSigned(c) {
		s, err := w.d.DecodeInt64()
		if err != nil {
			return 0, w.fail(where, err)
		}
		if s < 0 {
			return 0, w.malformed(where, "want an unsigned integer, found %d", s)
		}
		v = uint64(s)
	} else if v, err = w.d.DecodeUint64(); err != nil {
		return 0, w.fail(where, err)
	}
	if v > hi {
		return 0, w.malformed(where, "%d is out of range (at most %d)", v, hi)
	}
	return v, nil
}

func (w *wire) u64(where string) (uint64, error) { return w.uint(where, math.MaxUint64) }

func (w *wire) u32(where string) (uint32, error) {
	v, err := w.uint(where, math.MaxUint32)
	return uint32(v), err
}

// int reads an integer in [lo, hi].
func (w *wire) int(where string, lo, hi int64) (int64, error) {
	c, err := w.peek(where)
	if err != nil {
		return 0, err
	}
	if !isInt(c) {
		return 0, w.malformed(where, "want an integer, found %s", typeName(c))
	}
	var v int64
	if isSigned(c) {
		if v, err = w.d.DecodeInt64(); err != nil {
			return 0, w.fail(where, err)
		}
	} else {
		u, err := w.d.DecodeUint64()
		if err != nil {
			return 0, w.fail(where, err)
		}
		if u > math.MaxInt64 {
			return 0, w.malformed(where, "%d is out of range (at most %d)", u, hi)
		}
		v = int64(u)
	}
	if v < lo || v > hi {
		return 0, w.malformed(where, "%d is out of range [%d, %d]", v, lo, hi)
	}
	return v, nil
}

func (w *wire) boolean(where string) (bool, error) {
	if err := w.want(where, "a boolean", isBool); err != nil {
		return false, err
	}
	v, err := w.d.DecodeBool()
	if err != nil {
		return false, w.fail(where, err)
	}
	return v, nil
}

func (w *wire) null(where string) error {
	if err := w.want(where, "nil", func(c byte) bool { return c == msgpcode.Nil }); err != nil {
		return err
	}
	if err := w.d.DecodeNil(); err != nil {
		return w.fail(where, err)
	}
	return nil
}

func (w *wire) uuid(where string) (UUID, error) {
	s, err := w.str(where)
	if err != nil {
		return UUID{}, err
	}
	u, err := ParseUUID(s)
	if err != nil {
		return UUID{}, w.malformed(where, "%v", err)
	}
	return u, nil
}

// end requires the document to be over.
func (w *wire) end() error {
	if n := w.r.Len(); n > 0 {
		return w.malformed("after the document", "%d more bytes", n)
	}
	return nil
}
