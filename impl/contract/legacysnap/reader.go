package legacysnap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path"
)

// Getter gets one stored object, whole, by its exact key: all the reader
// needs of the old master's object store. The reader does no I/O of its
// own; it reads what Get returns, at most its limit for the file, and
// closes it. A missing object is an error wrapping ErrNotFound (naming the
// store helps the operator); any other error is passed on, wrapped.
type Getter interface {
	Get(ctx context.Context, key string) (io.ReadCloser, error)
}

// Source is where legacy snapshots live: a store read by exact keys, and
// the root under it ("" for the store's top) that upstream's master used as
// its object store root. Snapshots of cluster C are under
// {Root}/mooncake_master_snapshot/C/.
type Source struct {
	Store Getter
	Root  string
}

// Snapshot is one legacy snapshot, read and decoded whole.
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
}

// File is one file of a snapshot as read.
type File struct {
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// Key is the key of a file of cluster clusterID under a source root:
// mooncake_master_snapshot/{clusterID}/{parts...}.
func Key(clusterID string, parts ...string) string {
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
	key := s.key(Key(clusterID, LatestObject))
	data, err := s.read(ctx, key, maxSmallObjectSize)
	if err != nil {
		return "", File{}, err
	}
	id, err := DecodeLatest(data)
	if err != nil {
		return "", File{}, fmt.Errorf("%s: %w", key, err)
	}
	return id, fileOf(data), nil
}

// Read reads snapshot id of clusterID whole — descriptor, manifest,
// segments, metadata, task_manager — and decodes it as upstream's decoder
// does. Any failure wraps one of the package's typed errors (or the
// Getter's), names the file and the place in it, and yields no snapshot.
func (s Source) Read(ctx context.Context, clusterID, id string) (*Snapshot, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	snap := &Snapshot{ID: id, Files: map[string]File{}}
	get := func(name string, limit int64) ([]byte, string, error) {
		r := Key(clusterID, id, name)
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
	d, err := DecodeDescriptor(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
	}
	snap.Seq, snap.ProducerView, snap.CreatedAtMS, snap.Descriptor = d.Seq, d.ProducerView, d.CreatedAtMS, string(raw)
	if raw, key, err = get(ManifestObject, maxSmallObjectSize); err != nil {
		return nil, err
	}
	if err := CheckManifest(id, raw); err != nil {
		return nil, fmt.Errorf("%s: %w", key, err)
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

// read reads one object whole, by exact key, refusing more than limit bytes.
func (s Source) read(ctx context.Context, key string, limit int64) ([]byte, error) {
	rc, err := s.Store.Get(ctx, key)
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
