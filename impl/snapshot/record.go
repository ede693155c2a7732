package snapshot

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash"
	"io"

	"github.com/minio/crc64nvme"

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
	maxChunkObjects = 1 << 26
)

var (
	kinds    = map[byte]string{kindSegments: "segments", kindObjects: "objects"}
	replKind = []state.ReplicaKind{state.ReplicaMemory, state.ReplicaDisk}
	replStat = []state.ReplicaStatus{state.ReplicaInitialized, state.ReplicaProcessing, state.ReplicaComplete, state.ReplicaRemoved, state.ReplicaFailed}
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

// recordWriter writes one record's body, hashing it as it goes.
type recordWriter struct {
	w    *bufio.Writer
	body hash.Hash64
	n    uint64
	buf  [binary.MaxVarintLen64]byte
}

func (rw *recordWriter) raw(p []byte) {
	rw.w.Write(p)
	rw.body.Write(p)
	rw.n += uint64(len(p))
}

func (rw *recordWriter) uv(v uint64) { rw.raw(rw.buf[:binary.PutUvarint(rw.buf[:], v)]) }

func (rw *recordWriter) str(s string) {
	rw.uv(uint64(len(s)))
	rw.w.WriteString(s)
	rw.body.Write([]byte(s))
	rw.n += uint64(len(s))
}

func (rw *recordWriter) object(k state.ObjectKey, o state.Object) {
	rw.str(k.Tenant)
	rw.str(k.Key)
	rw.str(o.ClientID)
	rw.uv(o.Size)
	rw.str(o.GroupID)
	rw.uv(uint64(o.DataType))
	if o.HardPinned {
		rw.uv(1)
	} else {
		rw.uv(0)
	}
	rw.uv(uint64(len(o.Replicas)))
	for _, r := range o.Replicas {
		rw.uv(r.ID)
		rw.raw([]byte{kindCode(r.Kind), statusCode(r.Status)})
		rw.str(r.Segment)
		rw.uv(r.Offset)
		rw.uv(r.Length)
	}
}

func (rw *recordWriter) segment(s state.Segment) {
	rw.str(s.Endpoint)
	rw.str(s.Name)
	rw.uv(s.Capacity)
	rw.raw([]byte{kindCode(s.Kind)})
	rw.str(s.FilePath)
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
	var t [trailerSize]byte
	binary.LittleEndian.PutUint64(t[0:], rw.n)
	binary.LittleEndian.PutUint64(t[8:], rw.body.Sum64())
	rw.w.Write(t[:])
	return trailerSize
}

func newRecordWriter(w *bufio.Writer) *recordWriter {
	return &recordWriter{w: w, body: crc64nvme.New()}
}

// recordReader reads one record, hashing the body and bounding every field.
type recordReader struct {
	r    *bufio.Reader
	body hash.Hash64
	n    uint64
	err  error
	sbuf []byte
}

func newRecordReader(r *bufio.Reader) *recordReader {
	return &recordReader{r: r, body: crc64nvme.New(), sbuf: make([]byte, 0, 256)}
}

func (rr *recordReader) fail(err error) {
	if rr.err == nil {
		rr.err = err
	}
}

func (rr *recordReader) byte1() byte {
	if rr.err != nil {
		return 0
	}
	b, err := rr.r.ReadByte()
	if err != nil {
		rr.fail(truncated(err))
		return 0
	}
	rr.body.Write([]byte{b})
	rr.n++
	return b
}

func truncated(err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return fmt.Errorf("%w", ErrTruncated)
	}
	return err
}

func (rr *recordReader) uv() uint64 {
	var v uint64
	for shift := uint(0); ; shift += 7 {
		if rr.err != nil {
			return 0
		}
		if shift >= 64 {
			rr.fail(fmt.Errorf("%w: varint", ErrOverflow))
			return 0
		}
		b := rr.byte1()
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

func (rr *recordReader) str(field string) string {
	n := rr.uv()
	if rr.err != nil {
		return ""
	}
	if n > maxString {
		rr.fail(fmt.Errorf("%w: %s of %d bytes (max %d)", ErrOverflow, field, n, maxString))
		return ""
	}
	if cap(rr.sbuf) < int(n) {
		rr.sbuf = make([]byte, n)
	}
	b := rr.sbuf[:n]
	if _, err := io.ReadFull(rr.r, b); err != nil {
		rr.fail(truncated(err))
		return ""
	}
	rr.body.Write(b)
	rr.n += n
	return string(b)
}

func (rr *recordReader) object() (state.ObjectKey, state.Object) {
	var k state.ObjectKey
	var o state.Object
	k.Tenant = rr.str("tenant")
	k.Key = rr.str("key")
	o.ClientID = rr.str("client id")
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
	o.Replicas = make([]state.Replica, nrep)
	for i := range o.Replicas {
		r := &o.Replicas[i]
		r.ID = rr.uv()
		kc, sc := rr.byte1(), rr.byte1()
		if int(kc) >= len(replKind) || int(sc) >= len(replStat) {
			rr.fail(malformed("replica kind %d status %d", kc, sc))
			return k, o
		}
		r.Kind, r.Status = replKind[kc], replStat[sc]
		r.Segment = rr.str("segment")
		r.Offset = rr.uv()
		r.Length = rr.uv()
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
