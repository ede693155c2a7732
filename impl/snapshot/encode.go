package snapshot

import (
	"bufio"
	"fmt"
	"hash"
	"io"
	"iter"
	"os"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/state"
)

// DefaultChunkObjects is how many objects one objects/<n>.bin holds, but
// the last: upstream's default snapshot_chunk_object_count.
const DefaultChunkObjects = 1_000_000

// Part is one object of a snapshot's payload: a byte range of the work file.
type Part struct {
	Name   string `json:"name"` // segments.bin, objects/<n>.bin: the key relative to the artifact prefix
	Key    string `json:"key"`  // the full object key
	Offset int64  `json:"-"`
	Size   int64  `json:"size"`
	Count  uint64 `json:"objects"` // objects of a chunk; segments of segments.bin
	Index  uint64 `json:"-"`       // a chunk's index
	CRC32C uint32 `json:"crc32c"`
}

// Ref is the part as the manifest names it.
func (p Part) Ref() batchsnap.ObjectRef {
	return batchsnap.ObjectRef{Key: p.Key, StoredSize: uint64(p.Size), CRC32C: p.CRC32C}
}

// Layout is an encoded payload file: segments.bin, then the chunks.
type Layout struct {
	Segments Part
	Chunks   []Part
	Objects  uint64
	Size     int64 // bytes of every part together
}

// Parts is segments.bin and the chunks, in upload order.
func (l *Layout) Parts() []Part { return append([]Part{l.Segments}, l.Chunks...) }

// Source is what Encode reads: a capture (state.Capture) or any stream of
// segments and objects with their counts and cursor. Objects are read
// twice, in the same order both times (a chunk is measured before it is
// written, so that its header is exact without holding it in memory).
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

func objectsOf(c Source) func(yield func(state.ObjectKey, state.Object) bool) {
	if sh, ok := c.(sharedSource); ok {
		return sh.ObjectsShared
	}
	return c.Objects
}

// hashingFile writes to the work file, counting the bytes and hashing the
// current part.
type hashingFile struct {
	w   io.Writer
	crc hash.Hash32
	n   int64
	// budget is asked again every diskRecheckBytes (from nextCheck on)
	// whether the work directory still has room.
	budget    Budget
	nextCheck int64
}

func (h *hashingFile) Write(p []byte) (int, error) {
	if h.n >= h.nextCheck {
		if err := h.budget.whileWriting(h.n); err != nil {
			return 0, err
		}
		h.nextCheck = h.n + diskRecheckBytes
	}
	n, err := h.w.Write(p)
	h.crc.Write(p[:n])
	h.n += int64(n)
	return n, err
}

// Encode writes capture c into f as a snapshot's payload objects, named
// under keys: segments.bin, then objects/<n>.bin of chunkObjects objects
// each (the last holds the rest; an empty state has none), every part's
// CRC32C computed as it is written. Objects are measured in one pass and
// written in a second, so memory does not grow with the state or a chunk:
// one write buffer and one byte per object of the chunk being written.
// written, when set, is told each part as soon as it is in the file.
func Encode(c Source, f *os.File, keys batchsnap.ArtifactKeyspace, chunkObjects int, written func(Part)) (*Layout, error) {
	return encode(c, f, keys, chunkObjects, written, Budget{})
}

// encode is Encode asking budget, before the first write and every
// diskRecheckBytes after, whether the work directory still has room
// (Budget.whileWriting): a disk that fills while the payload is written
// stops the encoder with ErrDiskBudget.
func encode(c Source, f *os.File, keys batchsnap.ArtifactKeyspace, chunkObjects int, written func(Part), budget Budget) (*Layout, error) {
	if chunkObjects <= 0 {
		return nil, fmt.Errorf("%w: chunk object count %d", ErrWriterArguments, chunkObjects)
	}
	if keys.Prefix() == "" {
		return nil, fmt.Errorf("%w: no artifact prefix", ErrWriterArguments)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if err := f.Truncate(0); err != nil {
		return nil, err
	}
	hf := &hashingFile{w: f, crc: batchsnap.NewCRC32C(), budget: budget}
	bw := bufio.NewWriterSize(hf, 1<<20)
	part := func(name, key string, start int64, count, index uint64) (Part, error) {
		if err := bw.Flush(); err != nil {
			return Part{}, err
		}
		p := Part{Name: name, Key: key, Offset: start, Size: hf.n - start, Count: count, Index: index, CRC32C: hf.crc.Sum32()}
		hf.crc.Reset()
		if written != nil {
			written(p)
		}
		return p, nil
	}
	nObj, nSeg := c.Len()
	segs := make([]batchsnap.SegmentInfo, 0, nSeg)
	c.Segments(func(s state.Segment) bool { segs = append(segs, state.SnapshotSegment(&s)); return true })
	if len(segs) != nSeg {
		return nil, fmt.Errorf("%w: capture yielded %d segments, said %d", ErrCount, len(segs), nSeg)
	}
	if _, err := bw.Write(batchsnap.EncodeSegments(segs)); err != nil {
		return nil, err
	}
	l := &Layout{}
	var err error
	if l.Segments, err = part(batchsnap.SegmentsObject, keys.Segments(), 0, uint64(nSeg), 0); err != nil {
		return nil, err
	}

	// Pass 1: measure every chunk.
	var sizes []batchsnap.ChunkSize
	var entry batchsnap.ObjectEntry
	objects := objectsOf(c)
	count := 0
	objects(func(k state.ObjectKey, o state.Object) bool {
		if count%chunkObjects == 0 {
			sizes = append(sizes, batchsnap.NewChunkSize())
		}
		state.SnapshotObject(k, &o, &entry)
		sizes[len(sizes)-1].Add(&entry)
		count++
		return true
	})
	if count != nObj {
		return nil, fmt.Errorf("%w: capture yielded %d objects, said %d", ErrCount, count, nObj)
	}
	// Pass 2: write them, one chunk at a time, from the same iteration.
	next, stop := iter.Pull2(iter.Seq2[state.ObjectKey, state.Object](objects))
	defer stop()
	for i := range sizes {
		start := hf.n
		want := sizes[i].Objects()
		got := 0
		_, err := batchsnap.EncodeObjectChunkTo(bw, uint64(i), sizes[i], false, func(yield func(*batchsnap.ObjectEntry) bool) {
			for ; got < want; got++ {
				k, o, ok := next()
				if !ok {
					return
				}
				state.SnapshotObject(k, &o, &entry)
				if !yield(&entry) {
					return
				}
			}
		})
		if err != nil {
			return nil, fmt.Errorf("chunk %d: %w", i, err)
		}
		name := strings.TrimPrefix(keys.ObjectChunk(uint64(i)), keys.Prefix())
		p, err := part(name, keys.ObjectChunk(uint64(i)), start, uint64(want), uint64(i))
		if err != nil {
			return nil, err
		}
		l.Chunks = append(l.Chunks, p)
		l.Objects += uint64(want)
	}
	l.Size = hf.n
	// No fsync: the work file is read back through the page cache (decode
	// check, upload) and never reopened after a crash, so making it durable
	// buys nothing. A write error (ENOSPC) is still returned above.
	return l, nil
}
