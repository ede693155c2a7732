package legacysnap

import (
	"fmt"
	"math"
	"strings"
)

// Sizes of the offset allocator's serialized internals (serializer.cpp).
const (
	allocatorTopBins  = 32
	allocatorLeafBins = 256
	allocatorNodeSize = 1 + 6*4 // used flag, then six uint32 LE
	offsetAllocator   = 1       // BufferAllocatorType::OFFSET, the only one upstream serializes
)

// decodeSegments reads the segments file (segment.cpp SegmentSerializer):
// one zstd frame of the msgpack map {"ma", "an", "ms", "cs", "ld"}. Every
// key but "ld" (which older writers did not write) is required, and an
// unknown key is refused: this reader does not drop what it does not know.
func decodeSegments(file string, compressed []byte, fr *frames, d *Decoded) error {
	plain, err := fr.open(file, "the file", compressed, MaxFrameBytes)
	if err != nil {
		return err
	}
	w := newWire(file, plain)
	n, err := w.mapLen("the segments map")
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	var clients []clientSegments
	for range n {
		k, err := w.str("a key of the segments map")
		if err != nil {
			return err
		}
		if seen[k] {
			return w.malformed("the segments map", "key %q twice", clipString(k))
		}
		seen[k] = true
		switch k {
		case "ma":
			t, err := w.uint(`"ma" (memory allocator type)`, math.MaxInt32)
			if err != nil {
				return err
			}
			if t != offsetAllocator {
				return w.malformed(`"ma"`, "allocator type %d: upstream serializes only the offset allocator (1)", t)
			}
		case "an":
			if d.AllocatorNames, err = decodeStrings(w, `"an" (allocator names)`); err != nil {
				return err
			}
		case "ms":
			if err := decodeMounted(w, fr, d); err != nil {
				return err
			}
		case "cs":
			if clients, err = decodeClientSegments(w); err != nil {
				return err
			}
		case "ld":
			if d.LocalSSD, err = decodeLocalSSD(w); err != nil {
				return err
			}
		default:
			return w.malformed("the segments map", "unknown key %q", clipString(k))
		}
	}
	if err := w.end(); err != nil {
		return err
	}
	for _, k := range []string{"ma", "an", "ms", "cs"} {
		if !seen[k] {
			return w.malformed("the segments map", "no %q", k)
		}
	}
	return assignClients(file, d, clients)
}

func decodeStrings(w *wire, where string) ([]string, error) {
	n, err := w.arrayLen(where)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, n)
	for i := range n {
		s, err := w.str(fmt.Sprintf("%s[%d]", where, i))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// decodeMounted reads "ms": segment id → mounted segment.
func decodeMounted(w *wire, fr *frames, d *Decoded) error {
	n, err := w.mapLen(`"ms" (mounted segments)`)
	if err != nil {
		return err
	}
	d.byID = make(map[UUID]int, n)
	for range n {
		id, err := w.uuid(`a key of "ms"`)
		if err != nil {
			return err
		}
		where := "segment " + id.String()
		s, err := decodeMountedSegment(w, fr, where)
		if err != nil {
			return err
		}
		if s.ID != id {
			return fmt.Errorf("%w: %s: %s: keyed %s, its own id is %s", ErrContent, w.file, where, id, s.ID)
		}
		if _, dup := d.byID[id]; dup {
			return fmt.Errorf("%w: %s: %s: mounted twice", ErrContent, w.file, where)
		}
		d.byID[id] = len(d.Segments)
		d.Segments = append(d.Segments, s)
	}
	return nil
}

// decodeMountedSegment reads [id, name, base, size, te_endpoint, status,
// has_allocator, allocator|nil, host_id].
func decodeMountedSegment(w *wire, fr *frames, where string) (Segment, error) {
	var s Segment
	n, err := w.arrayLen(where)
	if err != nil {
		return s, err
	}
	if n != 8 && n != 9 {
		return s, w.malformed(where, "an array of %d elements, want 9 (8 from older writers)", n)
	}
	if s.ID, err = w.uuid(where + " id"); err != nil {
		return s, err
	}
	if s.Name, err = w.str(where + " name"); err != nil {
		return s, err
	}
	if s.Base, err = w.u64(where + " base"); err != nil {
		return s, err
	}
	if s.Size, err = w.u64(where + " size"); err != nil {
		return s, err
	}
	if s.Endpoint, err = w.str(where + " te_endpoint"); err != nil {
		return s, err
	}
	st, err := w.int(where+" status", math.MinInt16, math.MaxInt16)
	if err != nil {
		return s, err
	}
	s.Status = SegmentStatus(st)
	has, err := w.boolean(where + " has_allocator")
	if err != nil {
		return s, err
	}
	if has {
		if s.Allocator, err = decodeAllocator(w, fr, where+" allocator"); err != nil {
			return s, err
		}
	} else if err := w.null(where + " allocator"); err != nil {
		return s, err
	}
	if n == 9 {
		if s.HostID, err = w.str(where + " host_id"); err != nil {
			return s, err
		}
	}
	return s, nil
}

// decodeAllocator reads an OffsetBufferAllocator: [name, base, total,
// cur_size, endpoint, [base, multiplier_bits, capacity, allocated_size,
// allocated_num, inner]].
func decodeAllocator(w *wire, fr *frames, where string) (*Allocator, error) {
	a := &Allocator{}
	var err error
	if err = w.arrayOf(where, 6); err != nil {
		return nil, err
	}
	if a.Name, err = w.str(where + " name"); err != nil {
		return nil, err
	}
	if a.Base, err = w.u64(where + " base"); err != nil {
		return nil, err
	}
	if a.Total, err = w.u64(where + " total"); err != nil {
		return nil, err
	}
	if a.CurSize, err = w.u64(where + " cur_size"); err != nil {
		return nil, err
	}
	if a.Endpoint, err = w.str(where + " endpoint"); err != nil {
		return nil, err
	}
	off := where + " offset allocator"
	if err = w.arrayOf(off, 6); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		v    *uint64
	}{{"base", &a.OffsetBase}, {"multiplier_bits", &a.MultiplierBits}, {"capacity", &a.Capacity},
		{"allocated_size", &a.AllocatedSize}, {"allocated_num", &a.AllocatedNum}} {
		if *f.v, err = w.u64(off + " " + f.name); err != nil {
			return nil, err
		}
	}
	if err := decodeAllocatorCore(w, fr, off+" core", a); err != nil {
		return nil, err
	}
	return a, nil
}

// decodeAllocatorCore reads the offset allocator's internals: [size,
// current_capacity, max_capacity, free_storage, used_bins_top, used_bins[32],
// bin_indices[256], zstd(nodes), zstd(free_nodes), free_offset]. The node
// tables must hold exactly current_capacity entries, as upstream requires.
func decodeAllocatorCore(w *wire, fr *frames, where string, a *Allocator) error {
	if err := w.arrayOf(where, 10); err != nil {
		return err
	}
	var head [5]uint32
	for i, name := range []string{"size", "current_capacity", "max_capacity", "free_storage", "used_bins_top"} {
		v, err := w.u32(where + " " + name)
		if err != nil {
			return err
		}
		head[i] = v
	}
	a.NodeCapacity, a.MaxNodes = head[1], head[2]
	if a.NodeCapacity > a.MaxNodes {
		return fmt.Errorf("%w: %s: %s: current node capacity %d above the maximum %d", ErrContent, w.file, where, a.NodeCapacity, a.MaxNodes)
	}
	if err := w.arrayOf(where+" used_bins", allocatorTopBins); err != nil {
		return err
	}
	for i := range allocatorTopBins {
		if _, err := w.uint(fmt.Sprintf("%s used_bins[%d]", where, i), math.MaxUint8); err != nil {
			return err
		}
	}
	if err := w.arrayOf(where+" bin_indices", allocatorLeafBins); err != nil {
		return err
	}
	for i := range allocatorLeafBins {
		if _, err := w.u32(fmt.Sprintf("%s bin_indices[%d]", where, i)); err != nil {
			return err
		}
	}
	for _, t := range []struct {
		name string
		size uint64
	}{{"nodes", allocatorNodeSize}, {"free_nodes", 4}} {
		frame, err := w.bin(where + " " + t.name)
		if err != nil {
			return err
		}
		want := uint64(a.NodeCapacity) * t.size
		plain, err := fr.open(w.file, where+" "+t.name, frame, want)
		if err != nil {
			return err
		}
		if uint64(len(plain)) != want {
			return w.malformed(where+" "+t.name, "%d bytes, want %d (%d nodes of %d bytes)", len(plain), want, a.NodeCapacity, t.size)
		}
	}
	_, err := w.u32(where + " free_offset")
	return err
}

// clientSegments is one entry of "cs".
type clientSegments struct {
	client   UUID
	segments []UUID
}

// decodeClientSegments reads "cs": client id → the ids of its segments.
func decodeClientSegments(w *wire) ([]clientSegments, error) {
	n, err := w.mapLen(`"cs" (client segments)`)
	if err != nil {
		return nil, err
	}
	out := make([]clientSegments, 0, n)
	for range n {
		c, err := w.uuid(`a key of "cs"`)
		if err != nil {
			return nil, err
		}
		where := "client " + c.String()
		m, err := w.arrayLen(where)
		if err != nil {
			return nil, err
		}
		cs := clientSegments{client: c}
		for i := range m {
			id, err := w.uuid(fmt.Sprintf("%s segment %d", where, i))
			if err != nil {
				return nil, err
			}
			cs.segments = append(cs.segments, id)
		}
		out = append(out, cs)
	}
	return out, nil
}

// assignClients records each segment's client. An entry naming a segment
// that is not mounted is ignored, as upstream does; a segment two clients
// claim is refused.
func assignClients(file string, d *Decoded, clients []clientSegments) error {
	owner := map[UUID]UUID{}
	for _, c := range clients {
		for _, id := range c.segments {
			i, ok := d.byID[id]
			if !ok {
				continue
			}
			if prev, dup := owner[id]; dup && prev != c.client {
				return fmt.Errorf("%w: %s: segment %s is listed under clients %s and %s", ErrContent, file, id, prev, c.client)
			}
			owner[id] = c.client
			d.Segments[i].Client = c.client
		}
	}
	return nil
}

// decodeLocalSSD reads "ld" (local_ssd_codec.cpp): client id →
// [enable_offloading, n, (encoded_key, [tenant, key, size])×n,
// total_capacity_bytes]. An older writer put a bare size in place of the
// triple (the tenant and key are then in the encoded key) and left the
// capacity out; both are read.
func decodeLocalSSD(w *wire) ([]LocalSSDClient, error) {
	n, err := w.mapLen(`"ld" (local disk segments)`)
	if err != nil {
		return nil, err
	}
	out := make([]LocalSSDClient, 0, n)
	for range n {
		var c LocalSSDClient
		if c.Client, err = w.uuid(`a key of "ld"`); err != nil {
			return nil, err
		}
		where := "local disk client " + c.Client.String()
		m, err := w.arrayLen(where)
		if err != nil {
			return nil, err
		}
		if m < 2 {
			return nil, w.malformed(where, "an array of %d elements, want at least 2", m)
		}
		if c.EnableOffloading, err = w.boolean(where + " enable_offloading"); err != nil {
			return nil, err
		}
		count, err := w.uint(where+" count", uint64(m))
		if err != nil {
			return nil, err
		}
		if 2+2*count > uint64(m) || uint64(m)-2-2*count > 1 {
			return nil, w.malformed(where, "%d pending offloads in an array of %d elements", count, m)
		}
		for i := range count {
			p, err := decodePendingOffload(w, fmt.Sprintf("%s pending offload %d", where, i))
			if err != nil {
				return nil, err
			}
			c.Pending = append(c.Pending, p)
		}
		if uint64(m) == 3+2*count {
			v, err := w.int(where+" total_capacity_bytes", math.MinInt64, math.MaxInt64)
			if err != nil {
				return nil, err
			}
			c.TotalCapacityBytes = &v
		}
		out = append(out, c)
	}
	return out, nil
}

func decodePendingOffload(w *wire, where string) (PendingOffload, error) {
	var p PendingOffload
	var err error
	if p.EncodedKey, err = w.str(where + " key"); err != nil {
		return p, err
	}
	c, err := w.peek(where)
	if err != nil {
		return p, err
	}
	if isInt(c) { // an older writer's bare size
		if p.Size, err = w.int(where+" size", math.MinInt64, math.MaxInt64); err != nil {
			return p, err
		}
		tenant, key, found := strings.Cut(p.EncodedKey, "\x00")
		if !found {
			tenant, key = "", p.EncodedKey
		}
		p.Tenant, p.Key = normalTenant(tenant), key
		return p, nil
	}
	if err := w.arrayOf(where, 3); err != nil {
		return p, err
	}
	if p.Tenant, err = w.str(where + " tenant"); err != nil {
		return p, err
	}
	if p.Key, err = w.str(where + " key"); err != nil {
		return p, err
	}
	p.Size, err = w.int(where+" size", math.MinInt64, math.MaxInt64)
	return p, err
}

// normalTenant is upstream's TenantId: an empty tenant is "default".
func normalTenant(t string) string {
	if t == "" {
		return DefaultTenant
	}
	return t
}

// DefaultTenant is upstream's default tenant (tenant_id.h kDefaultValue).
const DefaultTenant = "default"
