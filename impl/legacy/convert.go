package legacy

import (
	"fmt"
	"sort"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/legacysnap"
	"github.com/oplogha/oplogha/impl/state"
)

// replicaStatus maps upstream's persisted replica statuses onto the state
// model's, which are upstream's enum (replica.h, values 0..5).
var replicaStatus = map[legacysnap.ReplicaStatus]state.ReplicaStatus{
	legacysnap.ReplicaUndefined:   state.ReplicaUndefined,
	legacysnap.ReplicaInitialized: state.ReplicaInitialized,
	legacysnap.ReplicaProcessing:  state.ReplicaProcessing,
	legacysnap.ReplicaComplete:    state.ReplicaComplete,
	legacysnap.ReplicaRemoved:     state.ReplicaRemoved,
	legacysnap.ReplicaFailed:      state.ReplicaFailed,
}

// Convert maps the decoded snapshot into the state model at
// ImportCursor(Seq) and sets State, Objects and Segments. It brings in
// exactly what upstream's decoder recovers, or nothing: it refuses
// (ErrNotImportable) a snapshot of which upstream's decoder drops objects,
// one with a segment that is not OK, one with segments sharing a transport
// endpoint and one with a replica status the model does not have; it
// refuses (ErrContent) content that is inconsistent in itself. Every
// replica kind the layout carries (memory, disk, local-disk, DFS) maps onto
// the model's kind of the same fields (replica, below). What the model has
// no place for and the import leaves behind — tasks, discarded replicas,
// local-disk offload queues, leases, put times, checksums, segment ids,
// bases, clients and allocators — is listed by NotImported.
func (s *Snapshot) Convert() error {
	st, err := convert(s.Decoded, ImportCursor(s.Seq))
	if err != nil {
		return fmt.Errorf("%s: %w", s.ID, err)
	}
	s.State = st
	s.Objects, s.Segments = st.Len()
	return nil
}

func convert(d *legacysnap.Decoded, cur state.Cursor) (*state.State, error) {
	if problems := notImportable(d); len(problems) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrNotImportable, strings.Join(problems, "; "))
	}
	b := state.NewBuilder()
	segs := append([]legacysnap.Segment(nil), d.Segments...)
	sort.Slice(segs, func(i, j int) bool { return segs[i].Endpoint < segs[j].Endpoint })
	for _, sg := range segs {
		if err := b.AddSegment(state.Segment{Endpoint: sg.Endpoint, Name: sg.Name, Capacity: sg.Size, Kind: state.ReplicaMemory}); err != nil {
			return nil, fmt.Errorf("%w: segment %s: %v", ErrContent, sg.ID, err)
		}
	}
	for n, o := range d.Objects {
		// An object is named by its shard and its position in key order:
		// tenant keys never go into an error.
		name := fmt.Sprintf("object %d (in key order, shard %d)", n, o.Shard)
		obj := state.Object{ClientID: stateUUID(o.ClientID), Size: o.Size, GroupID: o.GroupID, DataType: uint32(o.DataType), HardPinned: o.HardPinned}
		for i, r := range o.Replicas {
			if r.ID >= d.ReplicaNextID {
				return nil, fmt.Errorf("%w: %s replica %d: id %d not below replica_next_id %d", ErrContent, name, i, r.ID, d.ReplicaNextID)
			}
			sr, err := replica(d, r)
			if err != nil {
				return nil, fmt.Errorf("%w: %s replica %d: %v", ErrContent, name, i, err)
			}
			obj.Replicas = append(obj.Replicas, sr)
		}
		// A primary's put places every buffer within a mounted segment of its
		// kind; an import of this project's own content holds to the same.
		if err := b.CheckPlacement(obj); err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrContent, name, err)
		}
		if err := b.AddObject(state.ObjectKey{Tenant: o.Tenant, Key: o.Key}, obj); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrContent, name, err)
		}
	}
	st, err := b.Finish(cur)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrContent, err)
	}
	return st, nil
}

// replica maps one decoded replica onto the state model, field for field
// as upstream's PUT_END payload carries the same replica (state.Replica,
// payload.go):
//
//	MEMORY      on its segment's transport endpoint, at its address less
//	            the segment's base, its size as length (the legacy layout
//	            has no protocol for a buffer: it stays empty, as the
//	            payloads' legacy reader left it)
//	DISK        file_path, object_size as length
//	LOCAL_DISK  client_id, object_size as length, transport_endpoint as
//	            the replica's segment
//	DFS         file_path, offset, object_size as length, aligned_size,
//	            shard_idx
//
// A memory replica must lie within its segment; notImportable has made sure
// that segment is mounted.
func replica(d *legacysnap.Decoded, r legacysnap.Replica) (state.Replica, error) {
	out := state.Replica{ID: r.ID, Status: replicaStatus[r.Status]}
	switch {
	case r.Memory != nil:
		m := r.Memory
		sg, ok := d.SegmentByID(m.Segment)
		if !ok {
			return out, fmt.Errorf("memory replica on segment %s, which is not mounted", m.Segment)
		}
		if m.Address < sg.Base || m.Address-sg.Base > sg.Size || m.Size > sg.Size-(m.Address-sg.Base) {
			return out, fmt.Errorf("%d bytes at %#x lie outside segment %s [%#x, +%d)", m.Size, m.Address, sg.Name, sg.Base, sg.Size)
		}
		out.Kind, out.Segment, out.Offset, out.Length = state.ReplicaMemory, sg.Endpoint, m.Address-sg.Base, m.Size
	case r.Disk != nil:
		out.Kind, out.FilePath, out.Length = state.ReplicaDisk, r.Disk.FilePath, r.Disk.ObjectSize
	case r.LocalDisk != nil:
		l := r.LocalDisk
		out.Kind, out.ClientID, out.Length, out.Segment = state.ReplicaLocalDisk, stateUUID(l.Client), l.ObjectSize, l.Endpoint
	case r.DFS != nil:
		f := r.DFS
		out.Kind, out.FilePath, out.Offset, out.Length, out.AlignedSize, out.ShardIdx =
			state.ReplicaDFS, f.FilePath, f.Offset, f.ObjectSize, f.AlignedSize, f.ShardIdx
	default:
		return out, fmt.Errorf("a %s replica without its body", r.Type)
	}
	return out, nil
}

// stateUUID is a legacy client UUID in the state model: the same pair
// (upstream writes it as "<first>-<second>", the state's text form).
func stateUUID(u legacysnap.UUID) state.UUID { return state.UUID{First: u.Hi, Second: u.Lo} }

// notImportable lists why importing d would lose state or invent it.
func notImportable(d *legacysnap.Decoded) []string {
	var out []string
	if len(d.Skipped) > 0 {
		why := map[string]int{}
		for _, s := range d.Skipped {
			why[s.Reason+" ("+s.Segment+")"]++
		}
		out = append(out, fmt.Sprintf("upstream's decoder drops %d of the %d objects written: %s; importing the rest would be a partial import",
			len(d.Skipped), len(d.Skipped)+len(d.Objects), counted(why)))
	}
	for _, s := range d.Segments {
		if s.Status != legacysnap.SegmentOK {
			out = append(out, fmt.Sprintf("segment %s (%s) is %s: the state model has no segment status, and upstream's own "+
				"restore of a snapshot with a segment that is not OK fails and starts empty",
				s.Name, s.ID, s.Status))
		}
	}
	endpoints := map[string]string{}
	for _, s := range d.Segments {
		if prev, dup := endpoints[s.Endpoint]; dup {
			out = append(out, fmt.Sprintf("segments %s and %s share transport endpoint %q: the state model keys segments by endpoint", prev, s.Name, s.Endpoint))
		}
		endpoints[s.Endpoint] = s.Name
	}
	statuses := map[string]int{}
	for _, o := range d.Objects {
		for _, r := range o.Replicas {
			if _, ok := replicaStatus[r.Status]; !ok {
				statuses[r.Status.String()]++
			}
		}
	}
	if len(statuses) > 0 {
		out = append(out, fmt.Sprintf("replica statuses the state model does not have: %s", counted(statuses)))
	}
	return out
}

// counted renders a count per name, in name order.
func counted(m map[string]int) string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, 0, len(names))
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%s: %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// Left is a kind of content the import does not bring in, with how much of
// it the snapshot holds and why.
type Left struct {
	What  string `json:"what"`
	Count int    `json:"count"`
	Why   string `json:"why"`
}

// NotImported lists what snapshot content d holds that an import leaves
// behind because the state model has no place for it (the objects and
// segments themselves come in whole or not at all: see Convert).
func NotImported(d *legacysnap.Decoded) []Left {
	var out []Left
	add := func(what string, n int, why string) {
		if n > 0 {
			out = append(out, Left{What: what, Count: n, Why: why})
		}
	}
	add("tasks", len(d.Tasks), "copy and move tasks are runtime work of the old master; the state model holds no tasks")
	add("discarded replica groups", len(d.Discarded), "buffers awaiting release after a TTL, not objects")
	pending := 0
	for _, c := range d.LocalSSD {
		pending += len(c.Pending)
	}
	add("local-disk clients", len(d.LocalSSD), "offload settings and capacity of clients' local SSDs; the state model has no local-disk segments")
	add("pending offloads", pending, "objects queued for offload to a local SSD, not yet there")
	add("soft pins", d.SoftPinned, "upstream discards the legacy soft-pin slots on decode")
	if n := len(d.Objects); n > 0 {
		add("object leases and put times", n, "the state model holds no lease_timeout or put_start_time")
		sums := 0
		for _, o := range d.Objects {
			if o.Checksum != nil {
				sums++
			}
		}
		add("object checksums", sums, "the state model holds no object checksum")
	}
	add("segment ids, bases, clients, host ids and "+
		"allocators", len(d.Segments), "the state model keys a segment by its transport endpoint and keeps its name and "+
		"capacity; replica offsets are taken relative to the base")
	return out
}

// LeftBehind is NotImported in one line, for a log ("" when nothing is).
func LeftBehind(d *legacysnap.Decoded) string {
	var parts []string
	for _, l := range NotImported(d) {
		parts = append(parts, fmt.Sprintf("%s: %d", l.What, l.Count))
	}
	return strings.Join(parts, ", ")
}
