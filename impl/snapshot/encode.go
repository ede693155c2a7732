package snapshot

import (
	"bufio"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/minio/crc64nvme"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/state"
)

// DefaultChunkObjects is the default number of objects per chunk object.
const DefaultChunkObjects = 1 << 20

// Object names inside a snapshot's prefix: the contract's object layout.
const (
	SegmentsObject = contract.SegmentsObject
	ManifestObject = contract.ManifestObject
	DescriptorName = contract.DescriptorName
)

// ChunkObject names chunk n (contract.ChunkObject).
func ChunkObject(n int) string { return contract.ChunkObject(n) }

// Part is one stored object of the payload: a byte range of the stream.
type Part struct {
	Name   string `json:"key"`
	Offset int64  `json:"-"`
	Size   int64  `json:"size"`
	Count  uint64 `json:"objects"`
	CRC    uint64 `json:"-"`
}

// Layout describes an encoded payload file.
type Layout struct {
	Header       Header
	SegmentCount uint64
	Size         int64  // whole stream, header included (the payload size)
	Parts        []Part // segments.bin first, then chunks in order
}

// Checksum is the payload checksum (= envelope checksum).
func (l *Layout) Checksum() Checksum { return CRC64NVME(l.Header.Checksum) }

// teeHash writes through to a file while hashing the whole stream and the
// current part.
type teeHash struct {
	w       io.Writer
	whole   hash.Hash64
	part    hash.Hash64
	n       int64
	written func(end int64) // told the file's length after each write (may be nil)
}

func (t *teeHash) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	t.whole.Write(p[:n])
	t.part.Write(p[:n])
	t.n += int64(n)
	if t.written != nil && n > 0 {
		t.written(t.n)
	}
	return n, err
}

// Source is what Encode reads: a capture (state.Reader) or any stream of
// segments and objects in sorted order with their counts and cursor.
type Source interface {
	Cursor() state.Cursor
	Len() (objects, segments int)
	Objects(yield func(state.ObjectKey, state.Object) bool)
	Segments(yield func(state.Segment) bool)
}

// sharedSource is a Source that can yield objects without copying them
// (state.Capture): the encoder only reads what it is given.
type sharedSource interface {
	ObjectsShared(yield func(state.ObjectKey, state.Object) bool)
}

// Encode streams capture c into f as one payload — header, segments record,
// then chunk records of at most chunkObjects objects — computing every
// checksum in the same pass. Memory does not grow with the state: nothing is
// buffered beyond one write buffer.
func Encode(c Source, f *os.File, chunkObjects int) (*Layout, error) {
	return encode(c, f, chunkObjects, nil)
}

// encode is Encode telling written the length of the body in the file after
// each write: the bytes before it are final (only the header, written last,
// changes), so a decoder may read them while the encoder goes on.
func encode(c Source, f *os.File, chunkObjects int, written func(end int64)) (*Layout, error) {
	if chunkObjects <= 0 {
		chunkObjects = DefaultChunkObjects
	}
	if chunkObjects > maxChunkObjects {
		return nil, fmt.Errorf("chunk of %d objects above the codec limit %d", chunkObjects, maxChunkObjects)
	}
	cur := c.Cursor()
	if !cur.Consistent() {
		return nil, fmt.Errorf("%w: capture cursor %s", ErrCursorMismatch, cur)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if err := f.Truncate(0); err != nil {
		return nil, err
	}
	var zero [HeaderSize]byte
	if _, err := f.Write(zero[:]); err != nil {
		return nil, err
	}
	tee := &teeHash{w: f, whole: crc64nvme.New(), part: crc64nvme.New(), n: HeaderSize, written: written}
	bw := bufio.NewWriterSize(tee, 1<<20)
	l := &Layout{}
	var uncompressed uint64
	endPart := func(name string, start int64, count uint64) error {
		if err := bw.Flush(); err != nil {
			return err
		}
		l.Parts = append(l.Parts, Part{Name: name, Offset: start, Size: tee.n - start, Count: count, CRC: tee.part.Sum64()})
		tee.part.Reset()
		return nil
	}

	nObj, nSeg := c.Len()
	startRecord(bw, kindSegments, 0, uint64(nSeg))
	rw := newRecordWriter(bw)
	c.Segments(func(s state.Segment) bool { rw.segment(s); return true })
	rw.finish()
	uncompressed += rw.n
	if err := endPart(SegmentsObject, 0, uint64(nSeg)); err != nil {
		return nil, err
	}
	l.SegmentCount = uint64(nSeg)

	var count, total uint64
	chunk := 0
	start := tee.n
	chunkSize := func() uint64 { return min(uint64(chunkObjects), uint64(nObj)-total) }
	var err error
	if nObj > 0 {
		startRecord(bw, kindObjects, 0, chunkSize())
		rw.reset()
	}
	want := chunkSize()
	objects := c.Objects
	if sh, ok := c.(sharedSource); ok {
		objects = sh.ObjectsShared
	}
	objects(func(k state.ObjectKey, o state.Object) bool {
		rw.object(k, o)
		count++
		if count == want {
			rw.finish()
			uncompressed += rw.n
			total += count
			if err = endPart(ChunkObject(chunk), start, count); err != nil {
				return false
			}
			chunk++
			count, start = 0, tee.n
			if total < uint64(nObj) {
				want = chunkSize()
				startRecord(bw, kindObjects, uint64(chunk), want)
				rw.reset()
			}
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	if total != uint64(nObj) || count != 0 {
		return nil, fmt.Errorf("%w: capture yielded %d objects, said %d", ErrCount, total+count, nObj)
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	l.Header = Header{EnvelopeSchemaVersion: EnvelopeSchemaVersion, PayloadCodecVersion: PayloadCodecVersion, Cursor: cur,
		UncompressedSize: uncompressed, EncodedSize: uint64(tee.n - HeaderSize), Checksum: tee.whole.Sum64(),
		ObjectCount: uint64(nObj), ChunkCount: uint32(chunk)}
	l.Size = tee.n
	hdr := l.Header.Marshal()
	if _, err := f.WriteAt(hdr[:], 0); err != nil {
		return nil, err
	}
	// segments.bin holds the header, written last: hash its final bytes.
	seg := &l.Parts[0]
	h := crc64nvme.New()
	if _, err := io.Copy(h, io.NewSectionReader(f, 0, seg.Size)); err != nil {
		return nil, err
	}
	seg.CRC = h.Sum64()
	// No fsync: the work file is read back through the page cache (decode
	// check, upload) and never reopened after a crash, so making it durable
	// buys nothing and cost a third of the encode time. A write error
	// (ENOSPC) is still returned by the writes above.
	return l, nil
}
