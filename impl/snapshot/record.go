package snapshot

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash"
	"hash/maphash"
	"io"
	"math"
	"unsafe"

	"github.com/minio/crc64nvme"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/state"
)

// Record framing: "CHNK", version, kind, uvarint index, uvarint count, then
// count entries, then the trailer: body length and CRC64NVME of the body
// (both uint64 little-endian). Entries are uvarint-framed fields.
const (
	recordMagic   = "CHNK"
	recordVersion = 1
	kindSegments  = 1
	kindObjects   = 2
	trailerSize   = 16

	maxString       = state.MaxKeyBytes
	maxReplicas     = 1024
	maxChunkObjects = contract.MaxChunkObjects
)

var (
	kinds = map[byte]string{kindSegments: "segments", kindObjects: "objects"}
	// Codes are positions: new kinds and statuses are appended, never inserted.
	replKind = []state.ReplicaKind{state.ReplicaMemory, state.ReplicaDisk, state.ReplicaNoF, state.ReplicaLocalDisk, state.ReplicaDFS}
	replStat = []state.ReplicaStatus{state.ReplicaInitialized, state.ReplicaProcessing, state.ReplicaComplete,
		state.ReplicaRemoved, state.ReplicaFailed, state.ReplicaUndefined}
)

func kindCode(k state.ReplicaKind) byte {
	for i, x := range replKind {
		if x == k {
			return byte(i)
		}
	}
	return 255
}

func statusCode(s state.ReplicaStatus) byte {
	for i, x := range replStat {
		if x == s {
			return byte(i)
		}
	}
	return 255
}

// recordWriter writes one record's body, hashing it as it goes. Fields are
// appended to a block buffer that is hashed and written a block at a time:
// CRC64NVME runs at memory speed on blocks and at a fraction of it on
// the few bytes of one field.
type recordWriter struct {
	w    *bufio.Writer
	body hash.Hash64
	n    uint64
	buf  []byte
}

// recordBlock is the size at which a record writer flushes its block.
const recordBlock = 64 << 10

func (rw *recordWriter) flush() {
	if len(rw.buf) == 0 {
		return
	}
	rw.w.Write(rw.buf)
	rw.body.Write(rw.buf)
	rw.n += uint64(len(rw.buf))
	rw.buf = rw.buf[:0]
}

func (rw *recordWriter) uv(v uint64) { rw.buf = binary.AppendUvarint(rw.buf, v) }

func (rw *recordWriter) str(s string) {
	rw.buf = binary.AppendUvarint(rw.buf, uint64(len(s)))
	rw.buf = append(rw.buf, s...)
}

func (rw *recordWriter) object(k state.ObjectKey, o state.Object) {
	rw.str(k.Tenant)
	rw.str(k.Key)
	rw.uv(o.ClientID.First)
	rw.uv(o.ClientID.Second)
	rw.uv(o.Size)
	rw.str(o.GroupID)
	rw.uv(uint64(o.DataType))
	if o.HardPinned {
		rw.uv(1)
	} else {
		rw.uv(0)
	}
	rw.uv(uint64(len(o.Replicas)))
	for i := range o.Replicas {
		r := &o.Replicas[i]
		rw.uv(r.ID)
		rw.buf = append(rw.buf, kindCode(r.Kind), statusCode(r.Status))
		rw.str(r.Segment)
		rw.uv(r.Offset)
		rw.uv(r.Length)
		rw.str(r.Protocol)
		rw.str(r.FilePath)
		rw.uv(r.ClientID.First)
		rw.uv(r.ClientID.Second)
		rw.uv(r.AlignedSize)
		rw.buf = binary.AppendVarint(rw.buf, int64(r.ShardIdx))
	}
	if len(rw.buf) >= recordBlock {
		rw.flush()
	}
}

func (rw *recordWriter) segment(s state.Segment) {
	rw.str(s.Endpoint)
	rw.str(s.Name)
	rw.uv(s.Capacity)
	rw.buf = append(rw.buf, kindCode(s.Kind))
	rw.str(s.FilePath)
	if len(rw.buf) >= recordBlock {
		rw.flush()
	}
}

// startRecord writes a record's framing head (not part of the body hash).
func startRecord(w *bufio.Writer, kind byte, index, count uint64) int {
	var b [4 + 2 + 2*binary.MaxVarintLen64]byte
	n := copy(b[:], recordMagic)
	b[n], b[n+1] = recordVersion, kind
	n += 2
	n += binary.PutUvarint(b[n:], index)
	n += binary.PutUvarint(b[n:], count)
	w.Write(b[:n])
	return n
}

func (rw *recordWriter) finish() int {
	rw.flush()
	var t [trailerSize]byte
	binary.LittleEndian.PutUint64(t[0:], rw.n)
	binary.LittleEndian.PutUint64(t[8:], rw.body.Sum64())
	rw.w.Write(t[:])
	return trailerSize
}

func newRecordWriter(w *bufio.Writer) *recordWriter {
	return &recordWriter{w: w, body: crc64nvme.New(), buf: make([]byte, 0, recordBlock+4*maxString)}
}

// reset starts the next record, reusing the block buffer.
func (rw *recordWriter) reset() {
	rw.body.Reset()
	rw.n = 0
	rw.buf = rw.buf[:0]
}

// recordReader reads one record, hashing the body and bounding every field.
// It parses fields straight out of the buffered reader's window (Peek) and
// hashes and discards what it consumed a window at a time, so neither the
// checksum nor the parsing runs byte by byte.
type recordReader struct {
	r    *bufio.Reader
	body hash.Hash64
	n    uint64 // body bytes consumed and hashed
	err  error
	win  []byte // peeked from r, win[:pos] consumed but not yet hashed or discarded
	pos  int
	s    *decodeScratch
}

// decodeScratch is what one Decode shares across its records: interned
// strings (tenants, client ids, segment endpoints repeat across millions of
// objects; a restored state shares one copy of each) and, when nothing
// keeps the decoded values, buffers reused from object to object.
type decodeScratch struct {
	intern map[string]string
	// recent is a direct-mapped cache in front of intern, indexed by a
	// hash of the bytes: most lookups end here without the map's probing.
	seed   maphash.Seed
	recent [internCache]string
	keep   bool // a visitor keeps what it is given: every string and slice is its own
	key    []byte
	reps   []state.Replica
	// When kept, keys and replica lists are carved out of shared blocks
	// rather than allocated one by one: a restored state of millions of
	// objects is then a few thousand heap objects for the GC to mark, not
	// millions. A block lives as long as any object cut from it.
	keyArena []byte
	repArena []state.Replica
}

const (
	keyArenaBlock = 64 << 10
	repArenaBlock = 4096
)

// keepKey returns a string with b's bytes that the caller may keep.
func (s *decodeScratch) keepKey(b []byte) string {
	if len(b) > keyArenaBlock/8 {
		return string(b)
	}
	if cap(s.keyArena)-len(s.keyArena) < len(b) {
		s.keyArena = make([]byte, 0, keyArenaBlock)
	}
	start := len(s.keyArena)
	s.keyArena = append(s.keyArena, b...)
	return unsafe.String(unsafe.SliceData(s.keyArena[start:]), len(b))
}

// keepReplicas returns a zeroed replica list of n that the caller may keep
// (its capacity is n: an append copies it out).
func (s *decodeScratch) keepReplicas(n int) []state.Replica {
	if n > repArenaBlock/8 {
		return make([]state.Replica, n)
	}
	if cap(s.repArena)-len(s.repArena) < n {
		s.repArena = make([]state.Replica, 0, repArenaBlock)
	}
	start := len(s.repArena)
	s.repArena = s.repArena[:start+n]
	return s.repArena[start : start+n : start+n]
}

// maxInterned bounds the intern table (past it, strings are allocated);
// internCache is the size of the direct-mapped cache in front of it.
const (
	maxInterned = 1 << 14
	internCache = 1 << 10
)

func newDecodeScratch(keep bool) *decodeScratch {
	return &decodeScratch{intern: map[string]string{}, keep: keep, seed: maphash.MakeSeed()}
}

func newRecordReader(r *bufio.Reader, s *decodeScratch) *recordReader {
	return &recordReader{r: r, body: crc64nvme.New(), s: s}
}

func (rr *recordReader) fail(err error) {
	if rr.err == nil {
		rr.err = err
	}
}

// commit hashes and discards the consumed part of the window.
func (rr *recordReader) commit() {
	if rr.pos == 0 {
		return
	}
	rr.body.Write(rr.win[:rr.pos])
	rr.r.Discard(rr.pos)
	rr.n += uint64(rr.pos)
	rr.win, rr.pos = rr.win[rr.pos:], 0
}

// fill tries to make k unconsumed bytes available (k is at most a field's
// bound, far below the reader's buffer) and says whether it could; the
// reader's error is returned when it could not.
func (rr *recordReader) fill(k int) (bool, error) {
	if len(rr.win)-rr.pos >= k {
		return true, nil
	}
	rr.commit()
	n := rr.r.Buffered()
	if n < k {
		n = rr.r.Size()
	}
	w, err := rr.r.Peek(n)
	rr.win = w
	if len(w) >= k {
		return true, nil
	}
	if err == nil || err == bufio.ErrBufferFull {
		err = io.ErrUnexpectedEOF
	}
	return false, err
}

// need is fill that fails the record when the stream ends first.
func (rr *recordReader) need(k int) bool {
	if rr.err != nil {
		return false
	}
	ok, err := rr.fill(k)
	if !ok {
		rr.fail(truncated(err))
	}
	return ok
}

func (rr *recordReader) byte1() byte {
	if !rr.need(1) {
		return 0
	}
	b := rr.win[rr.pos]
	rr.pos++
	return b
}

func truncated(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w", ErrTruncated)
	}
	return err
}

func (rr *recordReader) uv() uint64 {
	if rr.err != nil {
		return 0
	}
	if ok, _ := rr.fill(binary.MaxVarintLen64); ok {
		v, n := binary.Uvarint(rr.win[rr.pos:])
		if n <= 0 {
			rr.fail(fmt.Errorf("%w: varint", ErrOverflow))
			return 0
		}
		rr.pos += n
		return v
	}
	// Fewer than ten bytes left in the stream: byte by byte, so a short
	// stream is named where it ends.
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= 64 {
			rr.fail(fmt.Errorf("%w: varint", ErrOverflow))
			return 0
		}
		b := rr.byte1()
		if rr.err != nil {
			return 0
		}
		if shift == 63 && b > 1 {
			rr.fail(fmt.Errorf("%w: varint", ErrOverflow))
			return 0
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v
		}
	}
}

// field reads a length-prefixed field and returns a view of its bytes,
// valid until the next read.
func (rr *recordReader) field(name string) []byte {
	n := rr.uv()
	if rr.err != nil {
		return nil
	}
	if n > maxString {
		rr.fail(fmt.Errorf("%w: %s of %d bytes (max %d)", ErrOverflow, name, n, maxString))
		return nil
	}
	if !rr.need(int(n)) {
		return nil
	}
	b := rr.win[rr.pos : rr.pos+int(n)]
	rr.pos += int(n)
	return b
}

// str reads a string that repeats across objects: interned.
func (rr *recordReader) str(name string) string {
	b := rr.field(name)
	if len(b) == 0 {
		return ""
	}
	slot := &rr.s.recent[maphash.Bytes(rr.s.seed, b)&(internCache-1)]
	if *slot == string(b) {
		return *slot
	}
	s, ok := rr.s.intern[string(b)]
	if !ok {
		s = string(b)
		if len(rr.s.intern) < maxInterned {
			rr.s.intern[s] = s
		}
	}
	*slot = s
	return s
}

// key reads an object key: a fresh string when the visitor keeps it, else a
// view of a buffer reused by the next object.
func (rr *recordReader) key() string {
	b := rr.field("key")
	if len(b) == 0 {
		return ""
	}
	if rr.s.keep {
		return rr.s.keepKey(b)
	}
	rr.s.key = append(rr.s.key[:0], b...)
	return unsafe.String(unsafe.SliceData(rr.s.key), len(rr.s.key))
}

func (rr *recordReader) object() (state.ObjectKey, state.Object) {
	var k state.ObjectKey
	var o state.Object
	k.Tenant = rr.str("tenant")
	k.Key = rr.key()
	o.ClientID = state.UUID{First: rr.uv(), Second: rr.uv()}
	o.Size = rr.uv()
	o.GroupID = rr.str("group id")
	dt := rr.uv()
	if dt > 1<<32-1 {
		rr.fail(fmt.Errorf("%w: data type %d", ErrOverflow, dt))
	}
	o.DataType = uint32(dt)
	switch rr.uv() {
	case 0:
	case 1:
		o.HardPinned = true
	default:
		rr.fail(malformed("hard_pinned flag"))
	}
	nrep := rr.uv()
	if nrep > maxReplicas {
		rr.fail(fmt.Errorf("%w: %d replicas", ErrOverflow, nrep))
		return k, o
	}
	if rr.err != nil {
		return k, o
	}
	if rr.s.keep {
		o.Replicas = rr.s.keepReplicas(int(nrep))
	} else {
		if cap(rr.s.reps) < int(nrep) {
			rr.s.reps = make([]state.Replica, nrep)
		}
		o.Replicas = rr.s.reps[:nrep]
	}
	for i := range o.Replicas {
		r := &o.Replicas[i]
		r.ID = rr.uv()
		kc, sc := rr.byte1(), rr.byte1()
		if rr.err != nil {
			return k, o
		}
		if int(kc) >= len(replKind) || int(sc) >= len(replStat) {
			rr.fail(malformed("replica kind %d status %d", kc, sc))
			return k, o
		}
		r.Kind, r.Status = replKind[kc], replStat[sc]
		r.Segment = rr.str("segment")
		r.Offset = rr.uv()
		r.Length = rr.uv()
		r.Protocol = rr.str("protocol")
		r.FilePath = rr.str("file path")
		r.ClientID = state.UUID{First: rr.uv(), Second: rr.uv()}
		r.AlignedSize = rr.uv()
		shard := rr.v()
		if shard < math.MinInt32 || shard > math.MaxInt32 {
			rr.fail(fmt.Errorf("%w: shard index %d", ErrOverflow, shard))
			return k, o
		}
		r.ShardIdx = int32(shard)
	}
	return k, o
}

func (rr *recordReader) segment() state.Segment {
	var s state.Segment
	s.Endpoint = rr.str("endpoint")
	s.Name = rr.str("name")
	s.Capacity = rr.uv()
	kc := rr.byte1()
	if int(kc) >= len(replKind) {
		rr.fail(malformed("segment kind %d", kc))
		return s
	}
	s.Kind = replKind[kc]
	s.FilePath = rr.str("file path")
	return s
}

// readRecordHead reads a record's framing head.
func readRecordHead(r *bufio.Reader) (kind byte, index, count uint64, n int, err error) {
	var head [6]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return 0, 0, 0, 0, truncated(err)
	}
	if string(head[:4]) != recordMagic {
		return 0, 0, 0, 0, malformed("record magic %q", head[:4])
	}
	if head[4] != recordVersion {
		return 0, 0, 0, 0, fmt.Errorf("%w: record version %d", ErrVersion, head[4])
	}
	kind = head[5]
	if _, ok := kinds[kind]; !ok {
		return 0, 0, 0, 0, malformed("record kind %d", kind)
	}
	n = 6
	index, err = binary.ReadUvarint(r)
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("%w: record index: %v", ErrTruncated, err)
	}
	n += uvLen(index)
	count, err = binary.ReadUvarint(r)
	if err != nil {
		return 0, 0, 0, 0, fmt.Errorf("%w: record count: %v", ErrTruncated, err)
	}
	n += uvLen(count)
	if count > maxChunkObjects {
		return 0, 0, 0, 0, fmt.Errorf("%w: record of %d entries", ErrCount, count)
	}
	return kind, index, count, n, nil
}

func uvLen(v uint64) int {
	var b [binary.MaxVarintLen64]byte
	return binary.PutUvarint(b[:], v)
}

// finish reads the trailer and checks length and checksum.
func (rr *recordReader) finish() error {
	if rr.err != nil {
		return rr.err
	}
	rr.commit()
	var t [trailerSize]byte
	if _, err := io.ReadFull(rr.r, t[:]); err != nil {
		return truncated(err)
	}
	if n := binary.LittleEndian.Uint64(t[0:]); n != rr.n {
		return malformed("record body of %d bytes, trailer says %d", rr.n, n)
	}
	if got, want := binary.LittleEndian.Uint64(t[8:]), rr.body.Sum64(); got != want {
		return fmt.Errorf("%w: record body crc64nvme %016x, computed %016x", ErrChecksum, got, want)
	}
	return nil
}

// v reads a signed (zig-zag) varint, as binary.AppendVarint writes it.
func (rr *recordReader) v() int64 {
	u := rr.uv()
	return int64(u>>1) ^ -int64(u&1)
}
