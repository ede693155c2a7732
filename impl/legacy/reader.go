package legacy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
)

// Source is where legacy snapshots live: a store read by exact keys, and
// the root under it ("" for the store's top) that upstream's master used as
// its object store root. Snapshots of cluster C are under
// {Root}/mooncake_master_snapshot/C/.
type Source struct {
	Store objstore.Store
	Root  string
}

// Snapshot is one legacy snapshot, read and validated whole.
type Snapshot struct {
	ID           string
	Seq          uint64 // last_included_seq of its descriptor (0 in snapshot-only mode)
	ProducerView uint64
	CreatedAtMS  int64
	// Descriptor and Manifest are the two text files as stored.
	Descriptor, Manifest string
	// Files are the files read, by key under the source root.
	Files map[string]File
	// Decoded is the content as upstream's decoder recovers it.
	Decoded *Decoded

	// Set by Convert: the import, at ImportCursor(Seq).
	Objects  int
	Segments int
	State    *state.State
}

// File is one file of a snapshot as read.
type File struct {
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// ImportCursor is where an imported snapshot sits in the new OpLog: batch 1,
// at the legacy sequence (at least 1, so that the cursor is consistent; a
// snapshot-only cluster recorded no sequence at all). The next batch the new
// primary appends is 2, starting at the sequence after it.
func ImportCursor(seq uint64) state.Cursor {
	return state.Cursor{BatchID: 1, Seq: max(seq, 1)}
}

// rel is the key of a file of cluster clusterID under the source root.
func rel(clusterID string, parts ...string) string {
	return path.Join(append([]string{SnapshotRootBase, clusterID}, parts...)...)
}

func (s Source) key(relKey string) string { return path.Join(s.Root, relKey) }

// Latest reads latest.txt: the id upstream's catalog marked newest. Only an
// explicit import consults it.
func (s Source) Latest(ctx context.Context, clusterID string) (string, error) {
	id, _, err := s.LatestFile(ctx, clusterID)
	return id, err
}

// LatestFile is Latest with the file as read.
func (s Source) LatestFile(ctx context.Context, clusterID string) (string, File, error) {
	key := s.key(rel(clusterID, LatestObject))
	data, err := s.read(ctx, key, maxSmallObjectSize)
	if err != nil {
		return "", File{}, err
	}
	id := strings.TrimSpace(string(data))
	if err := CheckID(id); err != nil {
		return "", File{}, fmt.Errorf("%s: %w", key, err)
	}
	return id, fileOf(data), nil
}

// Read reads snapshot id of clusterID whole — descriptor, manifest,
// segments, metadata, task_manager — and decodes it as upstream's decoder
// does. Any failure wraps one of the package's typed errors, names the file
// and the place in it, and yields no snapshot.
func (s Source) Read(ctx context.Context, clusterID, id string) (*Snapshot, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	snap := &Snapshot{ID: id, Files: map[string]File{}}
	get := func(name string, limit int64) ([]byte, string, error) {
		r := rel(clusterID, id, name)
		key := s.key(r)
		data, err := s.read(ctx, key, limit)
		if err != nil {
			return nil, key, err
		}
		snap.Files[r] = fileOf(data)
		return data, key, nil
	}
	raw, key, err := get(DescriptorObject, maxSmallObjectSize)
	if err != nil {
		return nil, err
	}
	d, err := snapshot.DecodeDescriptor(raw)
	if err != nil || !d.Legacy() {
		return nil, fmt.Errorf("%w: %s: %q: want <last_included_seq>|<producer_view_version>|<created_at_ms> (%v)", ErrDescriptor, key, clip(raw), err)
	}
	snap.Seq, snap.ProducerView, snap.CreatedAtMS, snap.Descriptor = d.LastIncludedSeq, d.ProducerViewVersion, d.CreatedAtMS, string(raw)
	if raw, key, err = get(ManifestObject, maxSmallObjectSize); err != nil {
		return nil, err
	}
	if got := strings.TrimSpace(string(raw)); got != ManifestFor(id) {
		return nil, fmt.Errorf("%w: %s is %q, want %q", ErrManifest, key, clip(raw), ManifestFor(id))
	}
	snap.Manifest = string(raw)
	fr, err := newFrames()
	if err != nil {
		return nil, err
	}
	defer fr.close()
	dec := &Decoded{}
	// Segments first: a memory replica is restored against its segment.
	for _, step := range []struct {
		name   string
		decode func(file string, data []byte, fr *frames, d *Decoded) error
	}{{SegmentsObject, decodeSegments}, {MetadataObject, decodeMetadata}, {TaskManagerObject, decodeTasks}} {
		raw, key, err := get(step.name, MaxObjectBytes)
		if err != nil {
			return nil, err
		}
		if err := step.decode(key, raw, fr, dec); err != nil {
			return nil, err
		}
	}
	snap.Decoded = dec
	return snap, nil
}

// Open reads snapshot id (Read) and converts it into the state model
// (Convert): a snapshot Open returns is ready to import.
func (s Source) Open(ctx context.Context, clusterID, id string) (*Snapshot, error) {
	snap, err := s.Read(ctx, clusterID, id)
	if err != nil {
		return nil, err
	}
	if err := snap.Convert(); err != nil {
		return nil, err
	}
	return snap, nil
}

// read reads one object whole, by exact key, refusing more than limit bytes.
func (s Source) read(ctx context.Context, key string, limit int64) ([]byte, error) {
	rc, _, err := s.Store.Get(ctx, key)
	if errors.Is(err, objstore.ErrNotFound) {
		return nil, fmt.Errorf("%w: %s in %s", ErrNotFound, key, s.Store.Name())
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", key, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes", ErrMalformed, key, limit)
	}
	return data, nil
}

func fileOf(data []byte) File {
	sum := sha256.Sum256(data)
	return File{Bytes: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
}

func clip(b []byte) string { return clipString(strings.TrimSpace(string(b))) }
