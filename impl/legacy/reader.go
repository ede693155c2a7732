package legacy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/snapshot"
	"github.com/oplogha/oplogha/impl/state"
)

// Limits on what one legacy snapshot may claim, so that a damaged or hostile
// file fails with an error instead of exhausting memory.
const (
	MaxObjectBytes     = 4 << 30 // one stored object (metadata, segments)
	MaxShardBytes      = 1 << 30 // one decompressed shard
	MaxShards          = 1 << 16
	maxSmallObjectSize = 4096 // latest.txt, descriptor.txt, manifest.txt
)

// Source is where legacy snapshots live: a store read by exact keys, and
// the root under it ("" for the store's top).
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
	Objects      int
	Segments     int
	// State holds the snapshot's content at ImportCursor(Seq).
	State *state.State
}

// ImportCursor is where an imported snapshot sits in the new OpLog: batch 1,
// at the legacy sequence (at least 1, so that the cursor is consistent; a
// snapshot-only cluster recorded no sequence at all). The next batch the new
// primary appends is 2, starting at the sequence after it.
func ImportCursor(seq uint64) state.Cursor {
	return state.Cursor{BatchID: 1, Seq: max(seq, 1)}
}

func (s Source) key(clusterID string, parts ...string) string {
	return path.Join(append([]string{s.Root, clusterID}, parts...)...)
}

// Latest reads {root}/{cluster_id}/latest.txt: the id the old catalog
// marked newest. Only an explicit import consults it.
func (s Source) Latest(ctx context.Context, clusterID string) (string, error) {
	data, err := s.read(ctx, s.key(clusterID, LatestObject), maxSmallObjectSize)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(data))
	if err := CheckID(id); err != nil {
		return "", fmt.Errorf("%s: %w", LatestObject, err)
	}
	return id, nil
}

// Open reads snapshot id of clusterID whole — descriptor, manifest, segment
// registry and every metadata shard — and validates it as the OpLog would
// validate the same mutations. Any failure is one of the package's typed
// errors and yields no state.
func (s Source) Open(ctx context.Context, clusterID, id string) (*Snapshot, error) {
	if err := CheckID(id); err != nil {
		return nil, err
	}
	snap := &Snapshot{ID: id}
	raw, err := s.read(ctx, s.key(clusterID, id, DescriptorObject), maxSmallObjectSize)
	if err != nil {
		return nil, err
	}
	d, err := snapshot.DecodeDescriptor(raw)
	if err != nil || !d.Legacy() {
		return nil, fmt.Errorf("%w: %s/%s: %q: want <last_included_seq>|<producer_view_version>|<created_at_ms> (%v)", ErrDescriptor, id, DescriptorObject, clip(raw), err)
	}
	snap.Seq, snap.ProducerView, snap.CreatedAtMS = d.LastIncludedSeq, d.ProducerViewVersion, d.CreatedAtMS
	raw, err = s.read(ctx, s.key(clusterID, id, ManifestObject), maxSmallObjectSize)
	if err != nil {
		return nil, err
	}
	if got := strings.TrimSpace(string(raw)); got != ManifestFor(id) {
		return nil, fmt.Errorf("%w: %s/%s is %q, want %q", ErrManifest, id, ManifestObject, clip(raw), ManifestFor(id))
	}
	b := state.NewBuilder()
	if snap.Segments, err = s.segments(ctx, clusterID, id, b); err != nil {
		return nil, err
	}
	if snap.Objects, err = s.metadata(ctx, clusterID, id, b); err != nil {
		return nil, err
	}
	if snap.State, err = b.Finish(ImportCursor(snap.Seq)); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrContent, id, err)
	}
	return snap, nil
}

func (s Source) segments(ctx context.Context, clusterID, id string, b *state.Builder) (int, error) {
	raw, err := s.read(ctx, s.key(clusterID, id, SegmentsObject), MaxObjectBytes)
	if err != nil {
		return 0, err
	}
	var doc Segments
	if err := decodeStrict(raw, &doc); err != nil {
		return 0, fmt.Errorf("%s/%s: %w", id, SegmentsObject, err)
	}
	if doc.Version != SegmentsVersion {
		return 0, fmt.Errorf("%w: %s/%s: version %d, this reader knows %d", ErrMalformed, id, SegmentsObject, doc.Version, SegmentsVersion)
	}
	sort.Slice(doc.Segments, func(i, j int) bool { return doc.Segments[i].Endpoint < doc.Segments[j].Endpoint })
	for _, sg := range doc.Segments {
		err := b.AddSegment(state.Segment{Endpoint: sg.Endpoint, Name: sg.Name, Capacity: sg.Capacity, Kind: state.ReplicaKind(sg.Kind), FilePath: sg.FilePath})
		if err != nil {
			return 0, fmt.Errorf("%w: %s/%s: %v", ErrContent, id, SegmentsObject, err)
		}
	}
	return len(doc.Segments), nil
}

func (s Source) metadata(ctx context.Context, clusterID, id string, b *state.Builder) (int, error) {
	where := id + "/" + MetadataObject
	raw, err := s.read(ctx, s.key(clusterID, id, MetadataObject), MaxObjectBytes)
	if err != nil {
		return 0, err
	}
	var doc Metadata
	if err := decodeStrict(raw, &doc); err != nil {
		return 0, fmt.Errorf("%s: %w", where, err)
	}
	switch {
	case doc.Version != MetadataVersion:
		return 0, fmt.Errorf("%w: %s: version %d, this reader knows %d", ErrMalformed, where, doc.Version, MetadataVersion)
	case doc.ShardCount < 1 || doc.ShardCount > MaxShards:
		return 0, fmt.Errorf("%w: %s: shard_count %d", ErrMalformed, where, doc.ShardCount)
	case len(doc.Shards) != doc.ShardCount:
		return 0, fmt.Errorf("%w: %s: %d shards present, shard_count says %d", ErrTruncated, where, len(doc.Shards), doc.ShardCount)
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(MaxShardBytes))
	if err != nil {
		return 0, err
	}
	defer dec.Close()
	var rows []Row
	var total uint64
	for i, sh := range doc.Shards {
		if sh.Index != i {
			return 0, fmt.Errorf("%w: %s: shard at position %d says index %d", ErrMalformed, where, i, sh.Index)
		}
		plain, err := dec.DecodeAll(sh.Zstd, nil)
		if err != nil {
			kind := ErrMalformed
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, zstd.ErrMagicMismatch) && len(sh.Zstd) < 4 {
				kind = ErrTruncated
			}
			return 0, fmt.Errorf("%w: %s: shard %d: zstd: %v", kind, where, i, err)
		}
		var shard List[Row]
		if err := decodeStrict(plain, &shard); err != nil {
			return 0, fmt.Errorf("%s: shard %d: %w", where, i, err)
		}
		if uint64(len(shard)) != sh.Rows {
			return 0, fmt.Errorf("%w: %s: shard %d holds %d rows, its header says %d", ErrTruncated, where, i, len(shard), sh.Rows)
		}
		total += sh.Rows
		rows = append(rows, shard...)
	}
	if total != doc.ObjectCount {
		return 0, fmt.Errorf("%w: %s: %d rows in the shards, object_count says %d", ErrTruncated, where, total, doc.ObjectCount)
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Tenant != rows[j].Tenant {
			return rows[i].Tenant < rows[j].Tenant
		}
		return rows[i].Key < rows[j].Key
	})
	for n, r := range rows {
		o, err := toObject(r.Object)
		if err != nil {
			return 0, fmt.Errorf("%w: %s: object %d (in key order): %v", ErrContent, where, n, err)
		}
		for _, rep := range o.Replicas {
			if rep.ID >= doc.ReplicaNextID {
				// The object by its position in key order: tenant keys are never logged.
				return 0, fmt.Errorf("%w: %s: object %d (in key order) replica id %d not below replica_next_id %d", ErrContent, where, n, rep.ID, doc.ReplicaNextID)
			}
		}
		if err := b.CheckPlacement(o); err != nil {
			return 0, fmt.Errorf("%w: %s: object %d (in key order): %v", ErrContent, where, n, err)
		}
		if err := b.AddObject(state.ObjectKey{Tenant: r.Tenant, Key: r.Key}, o); err != nil {
			return 0, fmt.Errorf("%w: %s: %v", ErrContent, where, err)
		}
	}
	return len(rows), nil
}

// toObject converts a legacy object: its client id is upstream's UUID text
// ("<first>-<second>"), and a "disk" replica, a range of a disk segment,
// is upstream's NoF descriptor (a buffer on a non-memory segment).
func toObject(w Object) (state.Object, error) {
	cid, err := state.ParseUUID(w.ClientID)
	if err != nil {
		return state.Object{}, err
	}
	o := state.Object{ClientID: cid, Size: w.Size, GroupID: w.GroupID, DataType: w.DataType, HardPinned: w.HardPinned}
	for _, r := range w.Replicas {
		o.Replicas = append(o.Replicas, state.Replica{ID: r.ID, Kind: ReplicaKind(r.Kind), Segment: r.Segment,
			Offset: r.Offset, Length: r.Length, Status: state.ReplicaStatus(r.Status)})
	}
	return o, nil
}

// ReplicaKind is the state kind of a legacy replica kind.
func ReplicaKind(k string) state.ReplicaKind {
	if k == "disk" {
		return state.ReplicaNoF
	}
	return state.ReplicaKind(k)
}

// decodeStrict decodes one msgpack document that must fill data exactly:
// unknown fields are refused, a short input is ErrTruncated, bytes after the
// document are ErrMalformed.
func decodeStrict(data []byte, v any) error {
	r := bytes.NewReader(data)
	dec := msgpack.NewDecoder(r)
	dec.DisallowUnknownFields(true)
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: msgpack ends after %d of %d bytes: %v", ErrTruncated, len(data)-r.Len(), len(data), err)
		}
		return fmt.Errorf("%w: msgpack: %v", ErrMalformed, err)
	}
	if r.Len() > 0 {
		return fmt.Errorf("%w: %d bytes after the msgpack document", ErrMalformed, r.Len())
	}
	return nil
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

func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}
