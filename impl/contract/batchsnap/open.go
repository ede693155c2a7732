package batchsnap

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/contract/structpack"
)

// Reading a snapshot. Upstream has no reader at 3b5a594 (standby bootstrap
// still loads its older msgpack snapshot), so what a reader checks across
// pointer, descriptor, manifest and objects is the project's, written down
// here and in CONTRACT.md:
//
//  1. The descriptor is read by the pointer's exact key and held to the
//     pointer's size and CRC32C before it is decoded; its identity (id,
//     cursor, view, creation time) must be the pointer's.
//  2. The manifest is read by the descriptor's manifest_key, held to its
//     manifest_size and manifest_crc32c, decoded, and its identity must be
//     the descriptor's.
//  3. Every key the manifest names must be the layout's key for that
//     object under the descriptor's root and id (upstream checks none).
//  4. segments.bin and each objects/<n>.bin, in order, are read whole,
//     held to their manifest stored_size and crc32c, and only then decoded;
//     each chunk must be chunk n with its manifest object_count.
//
// Nothing is listed; nothing is trusted before it is checked; the first
// failure ends the read, naming the object and the reason.

// MaxMetadataSize bounds the descriptor and manifest a reader takes.
const MaxMetadataSize = 64 << 20

// ReadObject GETs ref.Key and returns its bytes once they are exactly
// ref.StoredSize bytes with ref.CRC32C: a size or CRC32C mismatch is
// ErrChecksum; the store's errors are returned as they are, naming the key.
// It reads at most one byte more than the stored size.
func ReadObject(ctx context.Context, g contract.ObjectGetter, ref ObjectRef) ([]byte, error) {
	rc, size, err := g.GetObject(ctx, ref.Key)
	if err != nil {
		return nil, named(ref.Key, err)
	}
	defer rc.Close()
	if size >= 0 && uint64(size) != ref.StoredSize {
		return nil, failf(ErrChecksum, "%s is %d bytes, %d expected", ref.Key, size, ref.StoredSize)
	}
	if ref.StoredSize > 1<<40 {
		return nil, failf(ErrChecksum, "%s: stored size %d is not believable", ref.Key, ref.StoredSize)
	}
	data := make([]byte, 0, ref.StoredSize+1)
	buf := data[:ref.StoredSize+1]
	n, err := io.ReadFull(rc, buf)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, named(ref.Key, err)
	}
	if uint64(n) != ref.StoredSize {
		return nil, failf(ErrChecksum, "%s gave %d bytes, %d expected", ref.Key, n, ref.StoredSize)
	}
	data = buf[:n]
	if got := CRC32C(data); got != ref.CRC32C {
		return nil, failf(ErrChecksum, "%s has CRC32C %08x, %08x expected", ref.Key, got, ref.CRC32C)
	}
	return data, nil
}

// named makes sure a store's error names the key.
func named(key string, err error) error {
	if strings.Contains(err.Error(), key) {
		return err
	}
	return fmt.Errorf("%s: %w", key, err)
}

// Head is a snapshot's descriptor and manifest, read and checked against
// each other (and against the pointer it was opened from).
type Head struct {
	Pointer       Pointer // zero when opened by descriptor key alone
	Descriptor    Descriptor
	DescriptorRaw []byte
	Manifest      Manifest
	ManifestRaw   []byte
	Root          string
	Keys          ArtifactKeyspace
}

// Objects is the number of objects the snapshot holds.
func (h *Head) Objects() uint64 { return h.Manifest.Objects() }

// OpenHead reads and checks the descriptor p names and the manifest it
// names (steps 1-3 above).
func OpenHead(ctx context.Context, g contract.ObjectGetter, p Pointer) (*Head, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	raw, err := ReadObject(ctx, g, p.Descriptor())
	if err != nil {
		return nil, fmt.Errorf("descriptor: %w", err)
	}
	h, err := openHead(ctx, g, p.DescriptorKey, raw)
	if err != nil {
		return h, err
	}
	h.Pointer = p
	d := h.Descriptor
	if d.SnapshotID != p.SnapshotID || d.Cursor() != p.Cursor() || d.ProducerViewVersion != p.ProducerViewVersion || d.CreatedAtMS != p.CreatedAtMS {
		return h, fmt.Errorf("descriptor %s: %w", p.DescriptorKey, failf(ErrIdentity,
			"descriptor says %s at %s view %d created %d; the pointer says %s at %s view %d created %d", d.SnapshotID, d.Cursor(),
			d.ProducerViewVersion, d.CreatedAtMS, p.SnapshotID, p.Cursor(), p.ProducerViewVersion, p.CreatedAtMS))
	}
	return h, nil
}

// OpenHeadAt is OpenHead for a descriptor known only by its key (an
// operator inspecting a snapshot): there is no pointer to hold the
// descriptor's bytes to, so it is read bounded and decoded as it is.
func OpenHeadAt(ctx context.Context, g contract.ObjectGetter, key string) (*Head, error) {
	if _, _, ok := ParseDescriptorKey(key); !ok {
		return nil, failf(ErrIdentity, "%q is not a descriptor key (<root>/batch-oplog/<batch>-<lease>/descriptor.json)", key)
	}
	raw, err := readBounded(ctx, g, key)
	if err != nil {
		return nil, fmt.Errorf("descriptor: %w", err)
	}
	return openHead(ctx, g, key, raw)
}

func readBounded(ctx context.Context, g contract.ObjectGetter, key string) ([]byte, error) {
	rc, size, err := g.GetObject(ctx, key)
	if err != nil {
		return nil, named(key, err)
	}
	defer rc.Close()
	if size > MaxMetadataSize {
		return nil, failf(ErrMalformed, "%s is %d bytes, more than a descriptor can be", key, size)
	}
	data, err := io.ReadAll(io.LimitReader(rc, MaxMetadataSize+1))
	if err != nil {
		return nil, named(key, err)
	}
	if len(data) > MaxMetadataSize {
		return nil, failf(ErrMalformed, "%s is more than %d bytes", key, MaxMetadataSize)
	}
	return data, nil
}

func openHead(ctx context.Context, g contract.ObjectGetter, key string, raw []byte) (*Head, error) {
	root, id, _ := ParseDescriptorKey(key)
	h := &Head{DescriptorRaw: raw, Root: root, Keys: Artifacts(root, id.String())}
	d, err := DecodeDescriptor(raw)
	if err != nil {
		return h, fmt.Errorf("descriptor %s: %w", key, err)
	}
	h.Descriptor = d
	if d.SnapshotID != id.String() {
		return h, fmt.Errorf("descriptor %s: %w", key, failf(ErrIdentity, "names snapshot %s", d.SnapshotID))
	}
	if d.ManifestKey != h.Keys.Manifest() {
		return h, fmt.Errorf("descriptor %s: %w", key, failf(ErrIdentity, "names manifest %q, not %q", d.ManifestKey, h.Keys.Manifest()))
	}
	if d.ManifestSize > MaxMetadataSize {
		return h, fmt.Errorf("descriptor %s: %w", key, failf(ErrMalformed, "manifest_size %d is more than a manifest can be", d.ManifestSize))
	}
	mraw, err := ReadObject(ctx, g, ObjectRef{Key: d.ManifestKey, StoredSize: d.ManifestSize, CRC32C: d.ManifestCRC32C})
	if err != nil {
		return h, fmt.Errorf("manifest: %w", err)
	}
	h.ManifestRaw = mraw
	m, err := DecodeManifest(mraw)
	if err != nil {
		return h, fmt.Errorf("manifest %s: %w", d.ManifestKey, err)
	}
	h.Manifest = m
	if m.Identity != d.Identity {
		return h, fmt.Errorf("manifest %s: %w", d.ManifestKey, failf(ErrIdentity, "identity %+v, the descriptor's %+v", m.Identity, d.Identity))
	}
	if m.Segments.Key != h.Keys.Segments() {
		return h, fmt.Errorf("manifest %s: %w", d.ManifestKey, failf(ErrIdentity, "names segments %q, not %q", m.Segments.Key, h.Keys.Segments()))
	}
	for _, c := range m.ObjectChunks {
		if want := h.Keys.ObjectChunk(c.ChunkIndex); c.Key != want {
			return h, fmt.Errorf("manifest %s: %w", d.ManifestKey, failf(ErrIdentity, "names chunk %d %q, not %q", c.ChunkIndex, c.Key, want))
		}
	}
	return h, nil
}

// Visitor receives what ReadContent decodes. Any may be nil.
type Visitor struct {
	// Stored is called with each object's bytes once they are verified,
	// before they are decoded (segments.bin, then each chunk).
	Stored func(key string, data []byte)
	// Segments is called once, first.
	Segments func(segs []SegmentInfo) error
	// Chunk is called for each chunk in order; c and what it holds are
	// reused once Chunk returns.
	Chunk func(c *ObjectChunk) error
	// Object, when set instead of Chunk, is called for each object in
	// order, in one reused entry (ScanObjectChunk: no chunk is built, so
	// memory does not grow with a chunk's object count); each chunk is
	// checked whole before its first object is visited.
	Object func(e *ObjectEntry) error
	// Views: the strings Object is handed are views of the chunk's bytes,
	// valid only during the call (for a visitor that keeps nothing).
	Views bool
}

// ReadContent reads segments.bin and every chunk the manifest lists, in
// order (step 4 above), and hands them to v. Each object is held to its
// manifest size and CRC32C before it is decoded, and the next chunk is
// fetched while the current one is decoded.
func (h *Head) ReadContent(ctx context.Context, g contract.ObjectGetter, v Visitor) error {
	m := &h.Manifest
	raw, err := ReadObject(ctx, g, m.Segments)
	if err != nil {
		return fmt.Errorf("segments: %w", err)
	}
	if v.Stored != nil {
		v.Stored(m.Segments.Key, raw)
	}
	segs, err := DecodeSegments(raw)
	if err != nil {
		return fmt.Errorf("segments %s: %w", m.Segments.Key, err)
	}
	if v.Segments != nil {
		if err := v.Segments(segs); err != nil {
			return err
		}
	}
	type fetched struct {
		data []byte
		err  error
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan fetched, 1)
	go func() {
		defer close(next)
		for _, c := range m.ObjectChunks {
			data, err := ReadObject(ctx, g, ObjectRef{Key: c.Key, StoredSize: c.StoredSize, CRC32C: c.CRC32C})
			select {
			case next <- fetched{data, err}:
			case <-ctx.Done():
				return
			}
			if err != nil {
				return
			}
		}
	}()
	var chunk ObjectChunk
	var strs structpack.Strings
	for _, c := range m.ObjectChunks {
		f, ok := <-next
		if !ok {
			return ctx.Err()
		}
		if f.err != nil {
			return fmt.Errorf("object chunk %d: %w", c.ChunkIndex, f.err)
		}
		if v.Stored != nil {
			v.Stored(c.Key, f.data)
		}
		if v.Object != nil {
			s := &strs
			if v.Views {
				s = structpack.Views()
			}
			if err := ScanObjectChunk(f.data, c.ChunkIndex, c.ObjectCount, s, v.Object); err != nil {
				return fmt.Errorf("object chunk %s: %w", c.Key, err)
			}
			continue
		}
		if err := DecodeObjectChunkInto(f.data, c.ChunkIndex, c.ObjectCount, &chunk, &strs); err != nil {
			return fmt.Errorf("object chunk %s: %w", c.Key, err)
		}
		if v.Chunk != nil {
			if err := v.Chunk(&chunk); err != nil {
				return err
			}
		}
	}
	return nil
}

// Open reads the snapshot p names whole, as a recovering node reads it,
// and decodes every object without keeping them: Head's checks and
// ReadContent's, for a verifier.
func Open(ctx context.Context, g contract.ObjectGetter, p Pointer) (*Head, error) {
	h, err := OpenHead(ctx, g, p)
	if err != nil {
		return h, err
	}
	return h, h.ReadContent(ctx, g, Visitor{})
}
