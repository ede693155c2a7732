package structpack

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"fmt"
	"hash/maphash"
	"io"
	"unsafe"

	"github.com/oplogha/oplogha/impl/contract"
)

// Type literal bytes (struct_pack type_id values).
const (
	spInt32     = 0x01
	spInt64     = 0x03
	spUint64    = 0x04
	spUint8     = 0x06
	spUint16    = 0x08
	spBool      = 0x0b
	spChar      = 0x0c
	spString    = 0x80
	spContainer = 0x84
	spOptional  = 0x85
	spVariant   = 0x86
	spExpected  = 0x87
	spVoid      = 0xfa // std::monostate, and void as a tl::expected value
	spStruct    = 0xfd
	spEnd       = 0xff
)

var (
	LitInt32  = []byte{spInt32}
	LitInt64  = []byte{spInt64}
	LitUint64 = []byte{spUint64}
	LitUint8  = []byte{spUint8}
	LitUint16 = []byte{spUint16}
	LitBool   = []byte{spBool}
	LitString = []byte{spString, spChar}
	// LitVoid is the value type of a tl::expected<void, E>.
	LitVoid = []byte{spVoid}
	// LitPair64 is std::pair<uint64_t, uint64_t> (upstream's UUID). It is
	// trivially serializable, so its literal ends with its pack alignment and
	// alignment (8 and 8, as size literals 8+129 = 0x89) before the end mark.
	LitPair64 = []byte{spStruct, spUint64, spUint64, 0x89, 0x89, spEnd}
)

func LitStruct(fields ...[]byte) []byte {
	return append(append([]byte{spStruct}, bytes.Join(fields, nil)...), spEnd)
}

// LitTuple is the literal of a std::tuple (or of a std::pair that is not
// trivially copyable): the same as a struct's, the elements in order.
func LitTuple(elems ...[]byte) []byte { return LitStruct(elems...) }

func LitVector(elem []byte) []byte { return append([]byte{spContainer}, elem...) }

// LitOptional is the literal of a std::optional of elem.
func LitOptional(elem []byte) []byte { return append([]byte{spOptional}, elem...) }

// LitExpected is the literal of a tl::expected<value, unexpected>: its
// tag, the value type's literal (LitVoid for void), the error type's.
func LitExpected(value, unexpected []byte) []byte {
	return append(append([]byte{spExpected}, value...), unexpected...)
}

func LitVariant(alternatives ...[]byte) []byte {
	return append(append([]byte{spVariant}, bytes.Join(alternatives, nil)...), spEnd)
}

// Type is a payload type's identity on the wire.
type Type struct {
	name      string
	literal   []byte // type literal, without the NUL that follows it on the wire
	hash      uint32 // bit 0 clear
	hasCompat bool   // has compatible<> fields
}

// Hash is the type hash (bit 0 clear).
func (t *Type) Hash() uint32 { return t.hash }

// Name is the type's name, for errors.
func (t *Type) Name() string { return t.name }

// Literal is a copy of the type literal, without the NUL that ends it on
// the wire.
func (t *Type) Literal() []byte { return bytes.Clone(t.literal) }

// NewType is the identity of the type name whose type literal (without its
// NUL) is literal; hasCompat says it has compatible<> fields.
func NewType(name string, hasCompat bool, literal []byte) *Type {
	sum := md5.Sum(literal)
	return &Type{
		name:      name,
		literal:   literal,
		hash:      binary.BigEndian.Uint32(sum[:4]) &^ 1,
		hasCompat: hasCompat,
	}
}

// Size accumulates what struct_pack's size calculation needs: the bytes
// of the fields, the number of container lengths, and the largest container.
type Size struct {
	total, count, max uint64
}

func (z *Size) Fixed(n int) { z.total += uint64(n) }

func (z *Size) Container(n int) {
	z.count++
	z.max = max(z.max, uint64(n))
}

func (z *Size) Str(s string) {
	z.Container(len(s))
	z.total += uint64(len(s))
}

// Writer appends a body; width is the container length width.
type Writer struct {
	buf   []byte
	width int
	// MarshalTo's output, what went to it, and its first error.
	out     io.Writer
	written int64
	err     error
}

func (w *Writer) U8(v uint8) { w.buf = append(w.buf, v) }

func (w *Writer) Bool(v bool) {
	if v {
		w.U8(1)
	} else {
		w.U8(0)
	}
}

func (w *Writer) U16(v uint16) { w.buf = binary.LittleEndian.AppendUint16(w.buf, v) }
func (w *Writer) I32(v int32)  { w.buf = binary.LittleEndian.AppendUint32(w.buf, uint32(v)) }
func (w *Writer) I64(v int64)  { w.buf = binary.LittleEndian.AppendUint64(w.buf, uint64(v)) }
func (w *Writer) U64(v uint64) { w.buf = binary.LittleEndian.AppendUint64(w.buf, v) }

func (w *Writer) Length(n int) {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(n))
	w.buf = append(w.buf, b[:w.width]...)
}

func (w *Writer) Str(s string) {
	w.Length(len(s))
	w.buf = append(w.buf, s...)
}

// header is the head of a buffer of type t whose fields measure z: the
// type hash, and the metainfo byte, compatible length and type literal
// where they are written. It returns the head, the container length width
// and the whole buffer's length.
func header(t *Type, withLiteral bool, z Size) ([]byte, int, uint64) {
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
	w := Writer{width: compatWidth}
	w.buf = binary.LittleEndian.AppendUint32(w.buf, head)
	if head&1 != 0 {
		w.U8(meta)
		if compatWidth != 0 {
			w.Length(int(n))
		}
		if withLiteral {
			w.buf = append(append(w.buf, t.literal...), 0)
		}
	}
	return w.buf, width, n
}

// Marshal writes a buffer of type t whose fields measure z, with the
// body (compatible section included) written by body. withLiteral selects
// the non-NDEBUG wire variant.
func Marshal(t *Type, withLiteral bool, z Size, body func(*Writer)) []byte {
	head, width, n := header(t, withLiteral, z)
	w := Writer{buf: make([]byte, 0, n), width: width}
	w.buf = append(w.buf, head...)
	body(&w)
	return w.buf
}

// MarshalTo is Marshal writing to out as it goes: body calls Flush at
// points of its choosing (after each element of a long vector), and only
// what has not been flushed is held in memory. It returns the length
// written, which is an error unless it is the length z announced (the
// buffer's header states it).
func MarshalTo(out io.Writer, t *Type, withLiteral bool, z Size, body func(*Writer)) (int64, error) {
	head, width, n := header(t, withLiteral, z)
	w := Writer{buf: make([]byte, 0, flushAt+4096), width: width, out: out}
	w.buf = append(w.buf, head...)
	body(&w)
	w.flush()
	if w.err != nil {
		return w.written, w.err
	}
	if uint64(w.written) != n {
		return w.written, fmt.Errorf("struct_pack %s: wrote %d bytes, measured %d", t.name, w.written, n)
	}
	return w.written, nil
}

// flushAt is the buffered length from which Writer.Flush writes out.
const flushAt = 64 << 10

// Flush writes what is buffered to the output of MarshalTo once it has
// grown past a block; for Marshal it does nothing.
func (w *Writer) Flush() {
	if w.out != nil && len(w.buf) >= flushAt {
		w.flush()
	}
}

func (w *Writer) flush() {
	if w.out == nil || w.err != nil || len(w.buf) == 0 {
		return
	}
	n, err := w.out.Write(w.buf)
	w.written += int64(n)
	w.err = err
	w.buf = w.buf[:0]
}

// Reader reads a body. The first failure sticks in err and makes every
// later read return zero values, so a decoder reads straight through and
// checks once.
type Reader struct {
	data   []byte
	pos    int
	width  int
	compat bool // the buffer has a compatible length: compatible fields may follow the body
	err    error
	strs   *Strings // nil: every string read is its own
}

// Pos is the offset of the next byte to read.
func (r *Reader) Pos() int { return r.pos }

// Err is the first failure, or nil.
func (r *Reader) Err() error { return r.err }

// Fail records a failure (the first one sticks).
func (r *Reader) Fail(format string, args ...any) {
	if r.err == nil {
		r.err = contract.NewError(contract.ErrMalformed, fmt.Sprintf(format, args...))
	}
}

// Seek moves the reader to byte pos of its buffer (a position Pos gave).
func (r *Reader) Seek(pos int) {
	if pos < 0 || pos > len(r.data) {
		r.Fail("struct_pack seek to byte %d of %d", pos, len(r.data))
		return
	}
	r.pos = pos
}

func (r *Reader) Take(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if uint64(len(r.data)-r.pos) < n {
		r.Fail("struct_pack buffer truncated at byte %d (%d more wanted, %d left)", r.pos, n, len(r.data)-r.pos)
		return nil
	}
	b := r.data[r.pos : r.pos+int(n)]
	r.pos += int(n)
	return b
}

func (r *Reader) U8() uint8 {
	if b := r.Take(1); b != nil {
		return b[0]
	}
	return 0
}

// boolean reads a bool, which must be 0 or 1.
func (r *Reader) Bool() bool {
	at := r.pos
	switch v := r.U8(); v {
	case 0:
		return false
	case 1:
		return true
	default:
		r.Fail("struct_pack bool at byte %d is %d, not 0 or 1", at, v)
		return false
	}
}

func (r *Reader) U16() uint16 {
	if b := r.Take(2); b != nil {
		return binary.LittleEndian.Uint16(b)
	}
	return 0
}

func (r *Reader) I64() int64 { return int64(r.U64()) }

func (r *Reader) I32() int32 {
	if b := r.Take(4); b != nil {
		return int32(binary.LittleEndian.Uint32(b))
	}
	return 0
}

func (r *Reader) U64() uint64 {
	if b := r.Take(8); b != nil {
		return binary.LittleEndian.Uint64(b)
	}
	return 0
}

func (r *Reader) UintN(width int) uint64 {
	b := r.Take(uint64(width))
	if b == nil {
		return 0
	}
	var v [8]byte
	copy(v[:], b)
	return binary.LittleEndian.Uint64(v[:])
}

// length reads a container length that announces at least minElem bytes
// per element, refusing one that cannot fit in what is left.
func (r *Reader) Length(minElem uint64) int {
	n := r.UintN(r.width)
	if r.err == nil && n > 0 && n > uint64(len(r.data)-r.pos)/max(minElem, 1) {
		r.Fail("struct_pack container length %d at byte %d overruns the buffer", n, r.pos-r.width)
		return 0
	}
	return int(n)
}

func (r *Reader) Str() string {
	n := r.Length(1)
	return r.strs.Of(r.Take(uint64(n)))
}

// compatible reads the has-value byte of the next compatible field, and
// reports whether a value follows. A field past the end of the buffer (or
// in a buffer without a compatible length) is absent, as upstream reads it.
func (r *Reader) Compatible() bool {
	if r.err != nil || !r.compat || r.pos >= len(r.data) {
		return false
	}
	return r.Bool()
}

// finish reports the first error, or bytes left over.
func (r *Reader) Finish() error {
	if r.err != nil {
		return r.err
	}
	if r.pos != len(r.data) {
		return contract.NewError(contract.ErrMalformed, fmt.Sprintf("struct_pack buffer has %d bytes after the value", len(r.data)-r.pos))
	}
	return nil
}

// Open checks the header of a buffer of type t and returns a reader at
// its body.
func Open(t *Type, data []byte) (*Reader, error) {
	r := &Reader{}
	if err := r.Open(t, data, nil); err != nil {
		return nil, err
	}
	return r, nil
}

// open is Open into r (which a caller can keep on its stack), reading
// strings through strs (nil: each its own).
func (r *Reader) Open(t *Type, data []byte, strs *Strings) error {
	if len(data) < 4 {
		return contract.NewError(contract.ErrMalformed, fmt.Sprintf("struct_pack buffer of %d bytes has no type hash", len(data)))
	}
	head := binary.LittleEndian.Uint32(data)
	if head>>1 != t.hash>>1 {
		return contract.NewError(contract.ErrTypeHash, fmt.Sprintf("type hash %08x is not %s's %08x", head&^1, t.name, t.hash))
	}
	*r = Reader{data: data, pos: 4, width: 1, strs: strs}
	if head&1 == 0 {
		return nil
	}
	meta := r.U8()
	if r.err != nil {
		return r.err
	}
	if meta&0xe0 != 0 {
		return contract.NewError(contract.ErrMalformed, fmt.Sprintf("struct_pack metainfo %#02x has unknown bits", meta))
	}
	if cw := meta & 0b11; cw != 0 {
		if !t.hasCompat {
			return contract.NewError(contract.ErrMalformed, fmt.Sprintf("struct_pack metainfo announces a compatible length, but %s has no compatible fields", t.name))
		}
		n := r.UintN([4]int{0, 2, 4, 8}[cw])
		if r.err != nil {
			return r.err
		}
		if n != uint64(len(data)) {
			return contract.NewError(contract.ErrMalformed, fmt.Sprintf("struct_pack compatible length %d, but the buffer has %d bytes", n, len(data)))
		}
		r.compat = true
	}
	if meta&0b100 != 0 {
		if err := checkLiteral(t, data[r.pos:]); err != nil {
			return err
		}
		r.pos += len(t.literal) + 1
	}
	r.width = [4]int{1, 2, 4, 8}[meta>>3&0b11]
	return nil
}

// checkLiteral checks that rest begins with t's type literal and its NUL,
// naming the first byte that differs. A buffer that ends before the
// literal does is truncated (ErrMalformed), whatever its bytes.
func checkLiteral(t *Type, rest []byte) error {
	if len(rest) < len(t.literal)+1 {
		return contract.NewError(contract.ErrMalformed, fmt.Sprintf("struct_pack buffer truncated in %s's type literal (%d of its %d bytes)", t.name, len(rest), len(t.literal)+1))
	}
	for i, want := range t.literal {
		if rest[i] != want {
			return contract.NewError(contract.ErrTypeHash, fmt.Sprintf("struct_pack type literal is not %s's: literal byte %d is 0x%02x, want 0x%02x", t.name, i, rest[i], want))
		}
	}
	if c := rest[len(t.literal)]; c != 0 {
		return contract.NewError(contract.ErrTypeHash, fmt.Sprintf("struct_pack type literal is not %s's: it goes on past its %d bytes (0x%02x, not NUL)", t.name, len(t.literal), c))
	}
	return nil
}

// HasTypeLiteral reports whether a struct_pack buffer carries a type
// literal (the wire variant of a build without NDEBUG): its hash has the
// metainfo bit and the metainfo byte the literal bit. It checks nothing else.
func HasTypeLiteral(data []byte) bool {
	return len(data) > 4 && data[0]&1 != 0 && data[4]&0b100 != 0
}

// Strings interns the short strings a decoder reads (segment endpoints,
// protocols, group ids: a few values repeat over millions of payloads) in
// a direct-mapped table of the last one seen per slot, so that a caller
// that keeps what it decodes keeps one copy of each, and allocates only on
// a miss. Its zero value is ready; it is not safe for concurrent use.
type Strings struct {
	seed  maphash.Seed
	ready bool
	views bool
	slots [internSlots]string
}

// Views is a Strings whose strings are views of the buffer read, not
// copies: nothing is allocated, and a string is valid only while the
// buffer lives unchanged. For a reader that checks what it decodes and
// keeps none of it (a decode-check, a skip).
func Views() *Strings { return &Strings{views: true} }

const (
	internSlots = 256
	internMax   = 128 // longer strings are not interned
)

// of returns a string with b's bytes.
func (s *Strings) Of(b []byte) string {
	if s != nil && s.views {
		if len(b) == 0 {
			return ""
		}
		return unsafe.String(&b[0], len(b))
	}
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
