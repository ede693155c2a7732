package snapshot

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/structpack"
	"github.com/oplogha/oplogha/impl/state"
)

// PrepareSpec names what a prepared snapshot will be.
type PrepareSpec struct {
	Root         string // the snapshot root ({s3_prefix}/{cluster_id}); objects go under <root>/batch-oplog/<id>/
	ID           ID
	View         int64 // producer view of the captured prefix (0: none)
	WorkDir      string
	ChunkObjects int       // objects per chunk (DefaultChunkObjects is upstream's default); 0 or less is refused
	CreatedAt    time.Time // default now
	// Budget's free-space check is repeated while the payload is written
	// (the zero Budget checks nothing).
	Budget Budget
	// checked, when set (PrepareAndWrite), is told each part once it has
	// passed its decode-check, from the checking goroutine, in order.
	checked func(f *os.File, part Part)
}

// Prepared is a capture encoded into a temporary work file and
// decode-checked, with the manifest and descriptor that describe it:
// everything Write needs. Close removes the file.
type Prepared struct {
	File          *os.File
	Keys          batchsnap.ArtifactKeyspace
	Layout        *Layout
	Manifest      batchsnap.Manifest
	ManifestRaw   []byte
	Descriptor    batchsnap.Descriptor
	DescriptorRaw []byte
	EncodeTime    time.Duration
	DecodeTime    time.Duration // the decode-check, which runs alongside the encoder: from the start to its end
}

// Pointer is the pointer that names the prepared snapshot once written.
func (p *Prepared) Pointer() batchsnap.Pointer {
	return batchsnap.PointerTo(p.Descriptor, p.Keys.Descriptor(), p.DescriptorRaw)
}

// Work files are named WorkFilePrefix + the snapshot id + "-" + a random
// suffix + WorkFileSuffix.
const (
	WorkFilePrefix = "oplogha-snapshot-"
	WorkFileSuffix = ".payload"
)

// Prepare checks the writer's arguments as upstream's writer does
// (writer.cpp:83-89: an artifact prefix that builds, an id that starts with
// the capture's batch, a consistent cursor, a view and a creation time of
// zero or more, a positive chunk object count: else ErrWriterArguments and
// nothing is touched), encodes c into a new file in spec.WorkDir, and
// structurally validates every part by reading it back from the file and
// decoding it, while the encoder goes on (RFC "Encoding and Resource
// Bounds", steps 3-5); then builds the manifest and descriptor. On error
// nothing is left behind.
func Prepare(c Source, spec PrepareSpec) (p *Prepared, err error) {
	if spec.CreatedAt.IsZero() {
		spec.CreatedAt = time.Now()
	}
	cur := c.Cursor()
	keys := batchsnap.Artifacts(spec.Root, spec.ID.String())
	switch {
	case keys.Prefix() == "":
		return nil, fmt.Errorf("%w: no artifact prefix for root %q and id %q", ErrWriterArguments, spec.Root, spec.ID)
	case !strings.HasPrefix(spec.ID.String(), strconv.FormatUint(cur.BatchID, 10)+"-"):
		return nil, fmt.Errorf("%w: id %s is not of the captured batch %d", ErrWriterArguments, spec.ID, cur.BatchID)
	case !cur.Consistent():
		return nil, fmt.Errorf("%w: capture cursor %s", ErrWriterArguments, cur)
	case spec.View < 0 || spec.ChunkObjects <= 0 || spec.CreatedAt.UnixMilli() < 0:
		return nil, fmt.Errorf("%w: view %d, chunk object count %d, created %d", ErrWriterArguments, spec.View, spec.ChunkObjects, spec.CreatedAt.UnixMilli())
	}
	// The work file names its attempt (the snapshot id), so an operator
	// finding one left behind knows whose it was.
	f, err := os.CreateTemp(spec.WorkDir, WorkFilePrefix+spec.ID.String()+"-*"+WorkFileSuffix)
	if err != nil {
		return nil, err
	}
	p = &Prepared{File: f, Keys: keys}
	defer func() {
		if err != nil {
			p.Close()
			p = nil
		}
	}()
	// The decode-check reads each part back from the file, on another core,
	// as soon as the encoder has written it: every byte it checks is what
	// the file holds, all of it is checked before Prepare returns (so before
	// any upload), and it adds no pass of its own to the critical path.
	start := time.Now()
	parts := make(chan Part, 4)
	var checkErr error
	var checkEnd time.Time
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		var check state.SnapshotChecker
		for part := range parts {
			if checkErr == nil {
				checkErr = checkPart(f, part, &check)
				if checkErr == nil && spec.checked != nil {
					spec.checked(f, part)
				}
			}
		}
		checkEnd = time.Now()
	}()
	p.Layout, err = encode(c, f, keys, spec.ChunkObjects, func(part Part) { parts <- part }, spec.Budget)
	close(parts)
	p.EncodeTime = time.Since(start)
	wg.Wait()
	p.DecodeTime = checkEnd.Sub(start)
	if err != nil {
		return p, err
	}
	if checkErr != nil {
		return p, fmt.Errorf("decode-check: %w", checkErr)
	}
	id := batchsnap.NewIdentity(spec.ID, cur, spec.View)
	p.Manifest = batchsnap.Manifest{Identity: id, Segments: p.Layout.Segments.Ref(), ObjectChunks: make([]batchsnap.ChunkRef, 0, len(p.Layout.Chunks))}
	for _, ch := range p.Layout.Chunks {
		p.Manifest.ObjectChunks = append(p.Manifest.ObjectChunks, batchsnap.ChunkRef{ChunkIndex: ch.Index, Key: ch.Key, ObjectCount: ch.Count,
			StoredSize: uint64(ch.Size), CRC32C: ch.CRC32C})
	}
	if p.ManifestRaw, err = p.Manifest.Encode(); err != nil {
		return p, err
	}
	p.Descriptor = batchsnap.Descriptor{Identity: id, ManifestKey: keys.Manifest(), ManifestSize: uint64(len(p.ManifestRaw)),
		ManifestCRC32C: batchsnap.CRC32C(p.ManifestRaw), CreatedAtMS: spec.CreatedAt.UnixMilli()}
	if p.DescriptorRaw, err = p.Descriptor.Encode(); err != nil {
		return p, err
	}
	return p, nil
}

// CheckFile decode-checks every part of l in f, one after another: what
// Prepare does alongside the encoder.
func CheckFile(f *os.File, l *Layout) error {
	var check state.SnapshotChecker
	for _, part := range l.Parts() {
		if err := checkPart(f, part, &check); err != nil {
			return err
		}
	}
	return nil
}

// checkPart reads part back from f, holds it to its size and CRC32C, and
// decodes it: segments, or a chunk of its index and count whose every object
// the state model accepts. It keeps nothing it decodes: the part is mapped,
// not copied, and a chunk is scanned one object at a time.
func checkPart(f *os.File, part Part, check *state.SnapshotChecker) error {
	data, release, err := readPart(f, part.Offset, part.Size)
	if err != nil {
		return fmt.Errorf("%s: %w", part.Name, err)
	}
	defer release()
	if got := batchsnap.CRC32C(data); got != part.CRC32C {
		return fmt.Errorf("%s: %w: the file holds CRC32C %08x, the encoder computed %08x", part.Name, ErrChecksum, got, part.CRC32C)
	}
	if part.Name == batchsnap.SegmentsObject {
		segs, err := batchsnap.DecodeSegments(data)
		if err != nil {
			return fmt.Errorf("%s: %w", part.Name, err)
		}
		for i := range segs {
			if _, err := state.SegmentFromSnapshot(segs[i]); err != nil {
				return fmt.Errorf("%s: segment %d: %w", part.Name, i, err)
			}
		}
		if uint64(len(segs)) != part.Count {
			return fmt.Errorf("%s: %w: %d segments, %d encoded", part.Name, ErrCount, len(segs), part.Count)
		}
		return nil
	}
	i := 0
	err = batchsnap.ScanObjectChunk(data, part.Index, part.Count, structpack.Views(), func(e *batchsnap.ObjectEntry) error {
		if err := check.Check(e); err != nil {
			return fmt.Errorf("object %d: %w", i, err)
		}
		i++
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", part.Name, err)
	}
	return nil
}

// Close closes and removes the work file.
func (p *Prepared) Close() {
	if p != nil && p.File != nil {
		p.File.Close()
		os.Remove(p.File.Name())
	}
}
