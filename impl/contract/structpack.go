package contract

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"hash/maphash"
)

// This file is the part of yalantinglibs struct_pack (the version upstream
// pins, 0.6.0 at 7801bc9a) that upstream's OpLog payloads use, in its
// default configuration (no fast varints, STRUCT_PACK_OPTIMIZE off).
//
// A buffer is
//
//	hash (4 bytes LE) [metainfo (1 byte) [compatible length] [type literal NUL]] body compatible-section
//
//   - hash: the first 4 bytes of MD5(type literal), read big-endian, with
//     bit 0 cleared; bit 0 set means a metainfo byte follows. The literal,
//     and so the hash, leaves out compatible<> fields and field names.
//   - metainfo: bits 0-1, the width of the compatible length (0 none, 1 two
//     bytes, 2 four, 3 eight); bit 2, a type literal follows; bits 3-4, the
//     width of every container length in the buffer (0 one byte, 1 two, 2
//     four, 3 eight). It is written when the type has compatible fields, when
//     the literal is written, or when the lengths are wider than one byte.
//   - compatible length: the whole buffer's length, for types with
//     compatible<> fields; the reader treats compatible fields past it as absent.
//   - type literal: written only by builds without NDEBUG (upstream's
//     Release build type, whose flags drop -DNDEBUG, and Debug); the
//     RelWithDebInfo default has NDEBUG and writes none. A reader must
//     accept both.
//   - body: fields in declaration order, compatible<> fields skipped;
//     integers, enums and bools little-endian at their C++ size; std::string
//     and std::vector as a length then the elements; std::variant as a
//     one-byte index then the alternative; a trivially copyable struct such
//     as std::pair<uint64_t, uint64_t> as its raw bytes.
//   - compatible section: the compatible<> fields (here all version 1), in
//     declaration order, each a has-value byte then the value.
//
// Container lengths all take the width chosen for the largest container in
// the whole buffer: below 2^8 one byte, below 2^16 two, below 2^32 four,
// else eight.
//
// Upstream's reader is looser than its writer in ways this one is not: it
// ignores bytes after what it reads, ignores a compatible length that does
// not match the buffer, keeps a compatible field whose value is cut short,
// does not check that a bool byte is 0 or 1, and ignores unknown metainfo
// bits and a compatible length on a type without compatible fields. Here
// each of these is an error: no upstream writer produces them.

// Type literal bytes (struct_pack type_id values).
const (
	spInt32     = 0x01
	spUint64    = 0x04
	spBool      = 0x0b
	spChar      = 0x0c
	spString    = 0x80
	spContainer = 0x84
	spVariant   = 0x86
	spStruct    = 0xfd
	spEnd       = 0xff
)

var (
	litInt32  = []byte{spInt32}
	litUint64 = []byte{spUint64}
	litBool   = []byte{spBool}
	litString = []byte{spString, spChar}
	// litPair64 is std::pair<uint64_t, uint64_t> (upstream's UUID). It is
	// trivially serializable, so its literal ends with its pack alignment and
	// alignment (8 and 8, as size literals 8+129 = 0x89) before the end mark.
	litPair64 = []byte{spStruct, spUint64, spUint64, 0x89, 0x89, spEnd}
)

func litStruct(fields ...[]byte) []byte {
	return append(append([]byte{spStruct}, bytes.Join(fields, nil)...), spEnd)
}

func litVector(elem []byte) []byte { return append([]byte{spContainer}, elem...) }

func litVariant(alternatives ...[]byte) []byte {
	return append(append([]byte{spVariant}, bytes.Join(alternatives, nil)...), spEnd)
}

// spType is a payload type's identity on the wire.
type spType struct {
	name      string
	literal   []byte // type literal, without the NUL that follows it on the wire
	hash      uint32 // bit 0 clear
	hasCompat bool   // has compatible<> fields
}

func newSPType(name string, hasCompat bool, literal []byte) *spType {
	sum := md5.Sum(literal)
	return &spType{
		name:      name,
		literal:   literal,
		hash:      binary.BigEndian.Uint32(sum[:4]) &^ 1,
		hasCompat: hasCompat,
	}
}

// spSize accumulates what struct_pack's size calculation needs: the bytes
// of the fields, the number of container lengths, and the largest container.
type spSize struct {
	total, count, max uint64
}

func (z *spSize) fixed(n int) { z.total += uint64(n) }

func (z *spSize) container(n int) {
	z.count++
	z.max = max(z.max, uint64(n))
}

func (z *spSize) str(s string) {
	z.container(len(s))
	z.total += uint64(len(s))
}

// spWriter appends a body; width is the container length width.
type spWriter struct {
	buf   []byte
	width int
}

func (w *spWriter) u8(v uint8) { w.buf = append(w.buf, v) }

func (w *spWriter) boolean(v bool) {
	if v {
		w.u8(1)
	} else {
		w.u8(0)
	}
}

func (w *spWriter) i32(v int32)  { w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(v)) }
func (w *spWriter) u64(v uint64) { w.buf = binary.LittleEndian.AppendUint64(w.buf, v) }

func (w *spWriter) length(n int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	w.buf = append(w.buf, b[:w.width]...)
}

func (w *spWriter) str(s string) {
	w.length(len(s))
	w.buf = append(w.buf, s...)
}

// spMarshal writes a buffer of type t whose fields measure z, with the
// body (compatible section included) written by body. withLiteral selects
// the non-NDEBUG wire variant.
func spMarshal(t *spType, withLiteral bool, z spSize, body func(*spWriter)) []byte {
	hasMeta := t.hasCompat || withLiteral
	width, widthBits := 1, byte(0)
	switch {
	case z.max < 1<<8:
	case z.max < 1<<16:
		width, widthBits = 2, 1
	case z.max < 1<<32:
		width, widthBits = 4, 2
	default:
		width, widthBits = 8, 3
	}
	n := z.total + z.count*uint64(width) + 4
	if hasMeta || width != 1 {
		n++
	}
	meta := widthBits << 3
	if withLiteral {
		n += uint64(len(t.literal)) + 1
		meta |= 0b100
	}
	compatWidth := 0
	if t.hasCompat {
		switch {
		case n+2 < 1<<16:
			compatWidth, meta = 2, meta|1
		case n+4 < 1<<32:
			compatWidth, meta = 4, meta|2
		default:
			compatWidth, meta = 8, meta|3
		}
		n += uint64(compatWidth)
	}
	head := t.hash
	if hasMeta || width != 1 {
		head |= 1
	}
	w := spWriter{buf: make([]byte, 0, n), width: width}
	w.buf = binary.LittleEndian.AppendUint32(w.buf, head)
	if head&1 != 0 {
		w.u8(meta)
		if compatWidth != 0 {
			saved := w.width
			w.width = compatWidth
			w.length(int(n))
			w.width = saved
		}
		if withLiteral {
			w.buf = append(append(w.buf, t.literal...), 0)
		}
	}
	body(&w)
	return w.buf
}

// spReader reads a body. The first failure sticks in err and makes every
// later read return zero values, so a decoder reads straight through and
// checks once.
type spReader struct {
	data   []byte
	pos    int
	width  int
	compat bool // the buffer has a compatible length: compatible fields may follow the body
	err    error
	strs   *Strings // nil: every string read is its own
}

func (r *spReader) fail(format string, args ...any) {
	if r.err == nil {
		r.err = newError(ErrMalformed, fmt.Sprintf(format, args...))
	}
}

func (r *spReader) take(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if uint64(len(r.data)-r.pos) < n {
		r.fail("struct_pack buffer truncated at byte %d (%d more wanted, %d left)", r.pos, n, len(r.data)-r.pos)
		return nil
	}
	b := r.data[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b
}

func (r *spReader) u8() uint8 {
	if b := r.take(1); b != nil {
		return b[0]
	}
	return 0
}

// boolean reads a bool, which must be 0 or 1.
func (r *spReader) boolean() bool {
	at := r.pos
	switch v := r.u8(); v {
	case 0:
		return false
	case 1:
		return true
	default:
		r.fail("struct_pack bool at byte %d is %d, not 0 or 1", at, v)
		return false
	}
}

func (r *spReader) i32() int32 {
	if b := r.take(4); b != nil {
		return int32(binary.LittleEndian.Uint32(b))
	}
	return 0
}

func (r *spReader) u64() uint64 {
	if b := r.take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *spReader) uintN(width int) uint64 {
	b := r.take(uint64(width))
	if b == nil {
		return 0
	}
	var v [8]byte
	copy(v[:], b)
	return binary.LittleEndian.Uint64(v[:])
}

// length reads a container length that announces at least minElem bytes
// per element, refusing one that cannot fit in what is left.
func (r *spReader) length(minElem uint64) int {
	n := r.uintN(r.width)
	if r.err == nil && n > 0 && n > uint64(len(r.data)-r.pos)/max(minElem, 1) {
		r.fail("struct_pack container length %d at byte %d overruns the buffer", n, r.pos-r.width)
		return 0
	}
	return int(n)
}

func (r *spReader) str() string {
	n := r.length(1)
	return r.strs.of(r.take(uint64(n)))
}

// compatible reads the has-value byte of the next compatible field, and
// reports whether a value follows. A field past the end of the buffer (or
// in a buffer without a compatible length) is absent, as upstream reads it.
func (r *spReader) compatible() bool {
	if r.err != nil || !r.compat || r.pos >= len(r.data) {
		return false
	}
	return r.boolean()
}

// finish reports the first error, or bytes left over.
func (r *spReader) finish() error {
	if r.err != nil {
		return r.err
	}
	if r.pos != len(r.data) {
		return newError(ErrMalformed, fmt.Sprintf("struct_pack buffer has %d bytes after the value", len(r.data)-r.pos))
	}
	return nil
}

// spOpen checks the header of a buffer of type t and returns a reader at
// its body.
func spOpen(t *spType, data []byte) (*spReader, error) {
	r := &spReader{}
	if err := r.open(t, data, nil); err != nil {
		return nil, err
	}
	return r, nil
}

// open is spOpen into r (which a caller can keep on its stack), reading
// strings through strs (nil: each its own).
func (r *spReader) open(t *spType, data []byte, strs *Strings) error {
	if len(data) < 4 {
		return newError(ErrMalformed, fmt.Sprintf("struct_pack buffer of %d bytes has no type hash", len(data)))
	}
	head := binary.LittleEndian.Uint32(data)
	if head>>1 != t.hash>>1 {
		return newError(ErrTypeHash, fmt.Sprintf("type hash %08x is not %s's %08x", head&^1, t.name, t.hash))
	}
	*r = spReader{data: data, pos: 4, width: 1, strs: strs}
	if head&1 == 0 {
		return nil
	}
	meta := r.u8()
	if r.err != nil {
		return r.err
	}
	if meta&0xe0 != 0 {
		return newError(ErrMalformed, fmt.Sprintf("struct_pack metainfo %#02x has unknown bits", meta))
	}
	if cw := meta & 0b11; cw != 0 {
		if !t.hasCompat {
			return newError(ErrMalformed, fmt.Sprintf("struct_pack metainfo announces a compatible length, but %s has no compatible fields", t.name))
		}
		n := r.uintN([4]int{0, 2, 4, 8}[cw])
		if r.err != nil {
			return r.err
		}
		if n != uint64(len(data)) {
			return newError(ErrMalformed, fmt.Sprintf("struct_pack compatible length %d, but the buffer has %d bytes", n, len(data)))
		}
		r.compat = true
	}
	if meta&0b100 != 0 {
		lit := r.take(uint64(len(t.literal)) + 1)
		if r.err != nil {
			return r.err
		}
		if !bytes.Equal(lit[:len(t.literal)], t.literal) || lit[len(t.literal)] != 0 {
			return newError(ErrTypeHash, fmt.Sprintf("struct_pack type literal is not %s's", t.name))
		}
	}
	r.width = [4]int{1, 2, 4, 8}[meta>>3&0b11]
	return nil
}

// Strings interns the short strings a decoder reads (segment endpoints,
// protocols, group ids: a few values repeat over millions of payloads) in
// a direct-mapped table of the last one seen per slot, so that a caller
// that keeps what it decodes keeps one copy of each, and allocates only on
// a miss. Its zero value is ready; it is not safe for concurrent use.
type Strings struct {
	seed  maphash.Seed
	ready bool
	slots [internSlots]string
}

const (
	internSlots = 256
	internMax   = 128 // longer strings are not interned
)

// of returns a string with b's bytes.
func (s *Strings) of(b []byte) string {
	if s == nil || len(b) == 0 || len(b) > internMax {
		return string(b)
	}
	if !s.ready {
		s.seed, s.ready = maphash.MakeSeed(), true
	}
	slot := &s.slots[maphash.Bytes(s.seed, b)%internSlots]
	if *slot != string(b) {
		*slot = string(b)
	}
	return *slot
}
