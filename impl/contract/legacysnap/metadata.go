package legacysnap

import (
	"fmt"
	"math"
	"sort"

	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// maxTimestampMS is the largest millisecond timestamp upstream's decoder
// takes: the range of its system_clock (int64 nanoseconds).
const maxTimestampMS = math.MaxInt64 / 1_000_000

// decodeMetadata reads the metadata file (master_service.cpp
// MetadataSerializer), plain msgpack: {"shards": {shard index: bin
// zstd(msgpack {"metadata": [item...]})}, "discarded_replicas": [...],
// "replica_next_id": uint}. The segments must be decoded first: whether
// upstream's decoder keeps an object depends on its memory replicas'
// segments.
func decodeMetadata(file string, data []byte, fr *frames, d *Decoded) error {
	w := newWire(file, data)
	n, err := w.mapLen("the metadata map")
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for range n {
		k, err := w.str("a key of the metadata map")
		if err != nil {
			return err
		}
		if seen[k] {
			return w.malformed("the metadata map", "key %q twice", clipString(k))
		}
		seen[k] = true
		switch k {
		case "shards":
			err = decodeShards(w, fr, d)
		case "discarded_replicas":
			err = decodeDiscarded(w, d)
		case "replica_next_id":
			d.ReplicaNextID, err = w.u64(`"replica_next_id"`)
		default:
			err = w.malformed("the metadata map", "unknown key %q", clipString(k))
		}
		if err != nil {
			return err
		}
	}
	if err := w.end(); err != nil {
		return err
	}
	for _, k := range []string{"shards", "discarded_replicas", "replica_next_id"} {
		if !seen[k] {
			return w.malformed("the metadata map", "no %q", k)
		}
	}
	return checkObjects(file, d)
}

// decodeShards reads "shards": each value one zstd frame of a shard.
func decodeShards(w *wire, fr *frames, d *Decoded) error {
	n, err := w.mapLen(`"shards"`)
	if err != nil {
		return err
	}
	seen := map[uint64]bool{}
	for range n {
		idx, err := w.uint(`a shard index`, NumShards-1)
		if err != nil {
			return err
		}
		if seen[idx] {
			return w.malformed(`"shards"`, "shard %d twice", idx)
		}
		seen[idx] = true
		where := fmt.Sprintf("shard %d", idx)
		frame, err := w.bin(where)
		if err != nil {
			return err
		}
		plain, err := fr.open(w.file, where, frame, MaxFrameBytes)
		if err != nil {
			return err
		}
		if err := decodeShard(newWire(w.file, plain), where, int(idx), d); err != nil {
			return err
		}
	}
	return nil
}

// decodeShard reads one shard: {"metadata": [[tenant, key, object]...]}
// (a two-element [key, object] is an object of the default tenant).
func decodeShard(w *wire, where string, shard int, d *Decoded) error {
	if n, err := w.mapLen(where); err != nil {
		return err
	} else if n != 1 {
		return w.malformed(where, "a map of %d keys, want only \"metadata\"", n)
	}
	if k, err := w.str(where + " key"); err != nil {
		return err
	} else if k != "metadata" {
		return w.malformed(where, "key %q, want \"metadata\"", clipString(k))
	}
	n, err := w.arrayLen(where + " metadata")
	if err != nil {
		return err
	}
	for i := range n {
		item := fmt.Sprintf("%s item %d", where, i)
		m, err := w.arrayLen(item)
		if err != nil {
			return err
		}
		tenant := ""
		switch m {
		case 3:
			if tenant, err = w.str(item + " tenant"); err != nil {
				return err
			}
		case 2:
		default:
			return w.malformed(item, "an array of %d elements, want [tenant, key, object] or [key, object]", m)
		}
		key, err := w.str(item + " key")
		if err != nil {
			return err
		}
		o, skip, err := decodeObject(w, item, d)
		if err != nil {
			return err
		}
		o.Shard, o.Tenant, o.Key = shard, normalTenant(tenant), key
		if skip != nil {
			skip.Shard, skip.Tenant, skip.Key = shard, o.Tenant, key
			d.Skipped = append(d.Skipped, *skip)
			continue
		}
		d.Objects = append(d.Objects, o)
	}
	return w.end()
}

// decodeObject reads [client_id, put_start_ms, size, lease_timeout_ms,
// soft_pin, soft_pin_timeout, n_replicas, data_type?, replica×n,
// hard_pinned?, group_id?, checksum?]; the optional fields are told apart by
// their msgpack types, as upstream's DeserializeMetadata does. A non-nil
// Skipped says upstream's decoder drops the object.
func decodeObject(w *wire, where string, d *Decoded) (Object, *Skipped, error) {
	var o Object
	n, err := w.arrayLen(where + " object")
	if err != nil {
		return o, nil, err
	}
	if n < 7 {
		return o, nil, w.malformed(where, "an object of %d fields, want at least 7", n)
	}
	if o.ClientID, err = w.uuid(where + " client_id"); err != nil {
		return o, nil, err
	}
	if o.PutStartMS, err = w.uint(where+" put_start_time", maxTimestampMS); err != nil {
		return o, nil, err
	}
	if o.Size, err = w.u64(where + " size"); err != nil {
		return o, nil, err
	}
	if o.LeaseTimeoutMS, err = w.uint(where+" lease_timeout", maxTimestampMS); err != nil {
		return o, nil, err
	}
	soft, err := w.boolean(where + " soft_pin")
	if err != nil {
		return o, nil, err
	}
	softTimeout, err := w.u64(where + " soft_pin_timeout")
	if err != nil {
		return o, nil, err
	}
	if soft || softTimeout != 0 {
		d.SoftPinned++
	}
	count, err := w.u32(where + " replica count")
	if err != nil {
		return o, nil, err
	}
	if uint64(n) < 7+uint64(count) || uint64(n) > 7+uint64(count)+4 {
		return o, nil, w.malformed(where, "an object of %d fields with %d replicas", n, count)
	}
	idx := 7
	// next reports whether field idx exists and has a type ok accepts.
	next := func(ok func(byte) bool) (bool, error) {
		if idx >= n {
			return false, nil
		}
		c, err := w.peek(fmt.Sprintf("%s field %d", where, idx))
		return err == nil && ok(c), err
	}
	if ok, err := next(isInt); err != nil {
		return o, nil, err
	} else if ok {
		v, err := w.uint(where+" data_type", math.MaxUint8)
		if err != nil {
			return o, nil, err
		}
		o.DataType, idx = uint8(v), idx+1
	}
	var skip *Skipped
	for i := range int(count) {
		rw := fmt.Sprintf("%s replica %d", where, i)
		if idx >= n {
			return o, nil, w.malformed(rw, "the object ends before its replicas do")
		}
		r, err := decodeReplica(w, rw)
		if err != nil {
			return o, nil, err
		}
		idx++
		if skip == nil {
			if reason, seg := d.unavailable(r); reason != "" {
				skip = &Skipped{Reason: reason, Segment: seg, Freed: memoryReplicas(o.Replicas)}
			}
		}
		o.Replicas = append(o.Replicas, r)
	}
	if ok, err := next(isBool); err != nil {
		return o, nil, err
	} else if ok {
		if o.HardPinned, err = w.boolean(where + " hard_pinned"); err != nil {
			return o, nil, err
		}
		idx++
	}
	if ok, err := next(msgpcode.IsString); err != nil {
		return o, nil, err
	} else if ok {
		if o.GroupID, err = w.str(where + " group_id"); err != nil {
			return o, nil, err
		}
		idx++
	}
	if ok, err := next(isInt); err != nil {
		return o, nil, err
	} else if ok {
		v, err := w.u64(where + " object_checksum")
		if err != nil {
			return o, nil, err
		}
		o.Checksum, idx = &v, idx+1
	}
	if idx != n {
		return o, nil, w.malformed(where, "field %d of %d is none of hard_pinned, group_id, object_checksum", idx, n)
	}
	return o, skip, nil
}

func memoryReplicas(rs []Replica) []Replica {
	var out []Replica
	for _, r := range rs {
		if r.Memory != nil {
			out = append(out, r)
		}
	}
	return out
}

// unavailable says why upstream's decoder cannot restore a memory replica
// (its segment is not mounted, not OK, or has no allocator), and names the
// segment; "" when it can.
func (d *Decoded) unavailable(r Replica) (reason, segment string) {
	if r.Memory == nil {
		return "", ""
	}
	s, ok := d.SegmentByID(r.Memory.Segment)
	switch {
	case !ok:
		return SkipSegmentNotMounted, r.Memory.Segment.String()
	case s.Status != SegmentOK:
		return SkipSegmentNotOK, s.Name
	case s.Allocator == nil:
		return SkipNoAllocator, s.Name
	}
	return "", ""
}

// decodeReplica reads [id, status, type, body].
func decodeReplica(w *wire, where string) (Replica, error) {
	var r Replica
	if err := w.arrayOf(where, 4); err != nil {
		return r, err
	}
	var err error
	if r.ID, err = w.u64(where + " id"); err != nil {
		return r, err
	}
	st, err := w.int(where+" status", math.MinInt16, math.MaxInt16)
	if err != nil {
		return r, err
	}
	r.Status = ReplicaStatus(st)
	t, err := w.int(where+" type", math.MinInt8, math.MaxInt8)
	if err != nil {
		return r, err
	}
	r.Type = ReplicaType(t)
	body := where + " " + r.Type.String()
	switch r.Type {
	case ReplicaMemory:
		r.Memory, err = decodeMemoryReplica(w, body)
	case ReplicaDisk:
		r.Disk = &DiskReplica{}
		if err = w.arrayOf(body, 2); err == nil {
			if r.Disk.FilePath, err = w.str(body + " file_path"); err == nil {
				r.Disk.ObjectSize, err = w.u64(body + " object_size")
			}
		}
	case ReplicaLocalDisk:
		r.LocalDisk = &LocalDiskReplica{}
		if err = w.arrayOf(body, 3); err == nil {
			if r.LocalDisk.Client, err = w.uuid(body + " client_id"); err == nil {
				if r.LocalDisk.ObjectSize, err = w.u64(body + " object_size"); err == nil {
					r.LocalDisk.Endpoint, err = w.str(body + " transport_endpoint")
				}
			}
		}
	case ReplicaDFS:
		r.DFS, err = decodeDFSReplica(w, body)
	default:
		err = w.malformed(where, "replica type %d is none upstream serializes", t)
	}
	return r, err
}

// decodeMemoryReplica reads [size, buffer_address, segment_id, has_handle,
// [real_base, requested_size, [offset, metadata]] | nil].
func decodeMemoryReplica(w *wire, where string) (*MemoryReplica, error) {
	m := &MemoryReplica{}
	var err error
	if err = w.arrayOf(where, 5); err != nil {
		return nil, err
	}
	if m.Size, err = w.u64(where + " size"); err != nil {
		return nil, err
	}
	if m.Address, err = w.u64(where + " buffer_address"); err != nil {
		return nil, err
	}
	if m.Segment, err = w.uuid(where + " segment_id"); err != nil {
		return nil, err
	}
	has, err := w.boolean(where + " has_handle")
	if err != nil {
		return nil, err
	}
	if !has {
		return m, w.null(where + " handle")
	}
	h := &AllocationHandle{}
	hw := where + " handle"
	if err = w.arrayOf(hw, 3); err != nil {
		return nil, err
	}
	if h.RealBase, err = w.u64(hw + " real_base"); err != nil {
		return nil, err
	}
	if h.RequestedSize, err = w.u64(hw + " requested_size"); err != nil {
		return nil, err
	}
	if err = w.arrayOf(hw+" allocation", 2); err != nil {
		return nil, err
	}
	if h.Offset, err = w.u32(hw + " offset"); err != nil {
		return nil, err
	}
	if h.Metadata, err = w.u32(hw + " metadata"); err != nil {
		return nil, err
	}
	m.Handle = h
	return m, nil
}

// decodeDFSReplica reads [file_path, offset, object_size, aligned_size, shard_idx].
func decodeDFSReplica(w *wire, where string) (*DFSReplica, error) {
	r := &DFSReplica{}
	var err error
	if err = w.arrayOf(where, 5); err != nil {
		return nil, err
	}
	if r.FilePath, err = w.str(where + " file_path"); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		v    *uint64
	}{{"offset", &r.Offset}, {"object_size", &r.ObjectSize}, {"aligned_size", &r.AlignedSize}} {
		if *f.v, err = w.u64(where + " " + f.name); err != nil {
			return nil, err
		}
	}
	idx, err := w.int(where+" shard_idx", math.MinInt32, math.MaxInt32)
	r.ShardIdx = int32(idx)
	return r, err
}

// decodeDiscarded reads "discarded_replicas": [[ttl_ms, mem_size, n,
// replica×n]...]. Upstream's decoder refuses the whole snapshot when one of
// these replicas cannot be restored, so this reader does too.
func decodeDiscarded(w *wire, d *Decoded) error {
	n, err := w.arrayLen(`"discarded_replicas"`)
	if err != nil {
		return err
	}
	for i := range n {
		where := fmt.Sprintf("discarded replica group %d", i)
		m, err := w.arrayLen(where)
		if err != nil {
			return err
		}
		if m < 3 {
			return w.malformed(where, "an array of %d elements, want at least 3", m)
		}
		var g DiscardedGroup
		if g.TTLMS, err = w.u64(where + " ttl"); err != nil {
			return err
		}
		if g.MemSize, err = w.u64(where + " mem_size"); err != nil {
			return err
		}
		count, err := w.u32(where + " count")
		if err != nil {
			return err
		}
		if uint64(m) != 3+uint64(count) {
			return w.malformed(where, "%d replicas in an array of %d elements", count, m)
		}
		for j := range int(count) {
			rw := fmt.Sprintf("%s replica %d", where, j)
			r, err := decodeReplica(w, rw)
			if err != nil {
				return err
			}
			if reason, seg := d.unavailable(r); reason != "" {
				return fmt.Errorf("%w: %s: %s: %s (%s): upstream's decoder refuses the snapshot", ErrContent, w.file, rw, reason, seg)
			}
			g.Replicas = append(g.Replicas, r)
		}
		d.Discarded = append(d.Discarded, g)
	}
	return nil
}

// checkObjects orders the objects by (tenant, key) and refuses a key written
// twice (upstream keeps whichever it reads first). Objects are named by
// shard and position: tenant keys never go into an error.
func checkObjects(file string, d *Decoded) error {
	type ref struct {
		tenant, key string
		shard, pos  int
	}
	all := make([]ref, 0, len(d.Objects)+len(d.Skipped))
	for i, o := range d.Objects {
		all = append(all, ref{o.Tenant, o.Key, o.Shard, i})
	}
	for i, s := range d.Skipped {
		all = append(all, ref{s.Tenant, s.Key, s.Shard, -1 - i})
	}
	less := func(a, b ref) bool {
		if a.tenant != b.tenant {
			return a.tenant < b.tenant
		}
		return a.key < b.key
	}
	sort.Slice(all, func(i, j int) bool { return less(all[i], all[j]) })
	for i := 1; i < len(all); i++ {
		if all[i].tenant == all[i-1].tenant && all[i].key == all[i-1].key {
			return fmt.Errorf("%w: %s: shards %d and %d hold the same tenant and key", ErrContent, file, all[i-1].shard, all[i].shard)
		}
	}
	sort.Slice(d.Objects, func(i, j int) bool {
		return less(ref{tenant: d.Objects[i].Tenant, key: d.Objects[i].Key}, ref{tenant: d.Objects[j].Tenant, key: d.Objects[j].Key})
	})
	sort.Slice(d.Skipped, func(i, j int) bool {
		return less(ref{tenant: d.Skipped[i].Tenant, key: d.Skipped[i].Key}, ref{tenant: d.Skipped[j].Tenant, key: d.Skipped[j].Key})
	})
	return nil
}
