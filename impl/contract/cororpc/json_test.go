package cororpc

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"testing"
)

// Conversion of the vectors' JSON values (inputs, output: numbers as
// json.Number, 64-bit exact) into the Go types, strictly: a key the
// conversion does not read, or a value of another JSON type, fails the test,
// so a field the vectors have and these types lack cannot go unnoticed.

type jobj struct {
	t    testing.TB
	path string
	m    map[string]any
	used map[string]bool
}

func objOf(t testing.TB, path string, v any) *jobj {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: not an object: %#v", path, v)
	}
	return &jobj{t: t, path: path, m: m, used: map[string]bool{}}
}

func (o *jobj) get(key string) (any, string) {
	o.t.Helper()
	v, ok := o.m[key]
	if !ok {
		o.t.Fatalf("%s: no key %q (has %v)", o.path, key, keys(o.m))
	}
	o.used[key] = true
	return v, o.path + "." + key
}

// done fails the test if o has keys nothing read.
func (o *jobj) done() {
	o.t.Helper()
	for _, k := range keys(o.m) {
		if !o.used[k] {
			o.t.Fatalf("%s: key %q not converted", o.path, k)
		}
	}
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func numOf(t testing.TB, path string, v any, bits int, signed bool) (int64, uint64) {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%s: not a number: %#v", path, v)
	}
	if signed {
		i, err := strconv.ParseInt(n.String(), 10, bits)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return i, 0
	}
	u, err := strconv.ParseUint(n.String(), 10, bits)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return 0, u
}

func (o *jobj) u64(key string) uint64 {
	v, p := o.get(key)
	_, u := numOf(o.t, p, v, 64, false)
	return u
}

func (o *jobj) i64(key string) int64 {
	v, p := o.get(key)
	i, _ := numOf(o.t, p, v, 64, true)
	return i
}

func (o *jobj) i32(key string) int32 {
	v, p := o.get(key)
	i, _ := numOf(o.t, p, v, 32, true)
	return int32(i)
}

func (o *jobj) u8(key string) uint8 {
	v, p := o.get(key)
	_, u := numOf(o.t, p, v, 8, false)
	return uint8(u)
}

func (o *jobj) boolean(key string) bool {
	v, p := o.get(key)
	b, ok := v.(bool)
	if !ok {
		o.t.Fatalf("%s: not a bool: %#v", p, v)
	}
	return b
}

func (o *jobj) str(key string) string {
	v, p := o.get(key)
	return strOf(o.t, p, v)
}

func strOf(t testing.TB, path string, v any) string {
	t.Helper()
	s, ok := v.(string)
	if !ok {
		t.Fatalf("%s: not a string: %#v", path, v)
	}
	return s
}

func arrOf(t testing.TB, path string, v any) []any {
	t.Helper()
	a, ok := v.([]any)
	if !ok {
		t.Fatalf("%s: not an array: %#v", path, v)
	}
	return a
}

// strs is a vector<string>; empty is nil, as the decoder returns it.
func (o *jobj) strs(key string) []string {
	v, p := o.get(key)
	return strsOf(o.t, p, v)
}

func strsOf(t testing.TB, path string, v any) []string {
	var out []string
	for i, e := range arrOf(t, path, v) {
		out = append(out, strOf(t, fmt.Sprintf("%s[%d]", path, i), e))
	}
	return out
}

func (o *jobj) optU64(key string) *uint64 {
	if v, _ := o.get(key); v == nil {
		return nil
	}
	u := o.u64(key)
	return &u
}

func (o *jobj) optStrs(key string) *[]string {
	v, p := o.get(key)
	if v == nil {
		return nil
	}
	s := strsOf(o.t, p, v)
	return &s
}

func (o *jobj) uuid(key string) UUID {
	v, p := o.get(key)
	return uuidOf(o.t, p, v)
}

func uuidOf(t testing.TB, path string, v any) UUID {
	t.Helper()
	a := arrOf(t, path, v)
	if len(a) != 2 {
		t.Fatalf("%s: UUID of %d elements", path, len(a))
	}
	_, first := numOf(t, path+"[0]", a[0], 64, false)
	_, second := numOf(t, path+"[1]", a[1], 64, false)
	return UUID{First: first, Second: second}
}

func segmentOf(t testing.TB, path string, v any) Segment {
	o := objOf(t, path, v)
	s := Segment{
		ID: o.uuid("id"), Name: o.str("name"), Base: o.u64("base"), Size: o.u64("size"),
		TEEndpoint: o.str("te_endpoint"), Protocol: o.str("protocol"), HostID: o.str("host_id"),
	}
	o.done()
	return s
}

func configOf(t testing.TB, path string, v any) ReplicateConfig {
	o := objOf(t, path, v)
	c := ReplicateConfig{
		ReplicaNum:            o.u64("replica_num"),
		NoFReplicaNum:         o.u64("nof_replica_num"),
		DFSReplicaNum:         o.u64("dfs_replica_num"),
		SoftPinAction:         SoftPinAction(o.u8("soft_pin_action")),
		SoftPinTTLMs:          o.optU64("soft_pin_ttl_ms"),
		WithHardPin:           o.boolean("with_hard_pin"),
		PreferredSegments:     o.strs("preferred_segments"),
		PreferredSegment:      o.str("preferred_segment"),
		PreferredNoFSegments:  o.strs("preferred_nof_segments"),
		PreferAllocInSameNode: o.boolean("prefer_alloc_in_same_node"),
		DataType:              ObjectDataType(o.u8("data_type")),
		HostID:                o.str("host_id"),
		GroupIDs:              o.optStrs("group_ids"),
	}
	o.done()
	return c
}

func bufferOf(t testing.TB, path string, v any) BufferDescriptor {
	o := objOf(t, path, v)
	b := BufferDescriptor{Size: o.u64("size_"), BufferAddress: o.u64("buffer_address_"), Protocol: o.str("protocol_"), TransportEndpoint: o.str("transport_endpoint_")}
	o.done()
	return b
}

// replicaOf is a Replica::Descriptor; its variant is {"index", "type",
// <the alternative's fields>}.
func replicaOf(t testing.TB, path string, v any) ReplicaDescriptor {
	o := objOf(t, path, v)
	rd := ReplicaDescriptor{ID: o.u64("id")}
	vv, vp := o.get("descriptor_variant")
	d := objOf(t, vp, vv)
	index, typ := d.u8("index"), d.str("type")
	names := []string{"MemoryDescriptor", "NoFDescriptor", "DiskDescriptor", "LocalDiskDescriptor", "DistributedFSDescriptor"}
	if int(index) >= len(names) || names[index] != typ {
		t.Fatalf("%s: variant index %d type %q", vp, index, typ)
	}
	switch index {
	case 0, 1:
		bv, bp := d.get("buffer_descriptor")
		b := bufferOf(t, bp, bv)
		if index == 0 {
			rd.Variant = MemoryDescriptor{Buffer: b}
		} else {
			rd.Variant = NoFDescriptor{Buffer: b}
		}
	case 2:
		rd.Variant = DiskDescriptor{FilePath: d.str("file_path"), ObjectSize: d.u64("object_size")}
	case 3:
		rd.Variant = LocalDiskDescriptor{ClientID: d.uuid("client_id"), ObjectSize: d.u64("object_size"), TransportEndpoint: d.str("transport_endpoint")}
	case 4:
		rd.Variant = DistributedFSDescriptor{FilePath: d.str("file_path"), Offset: d.u64("offset"), ObjectSize: d.u64("object_size"), AlignedSize: d.u64("aligned_size"), ShardIdx: d.i32("shard_idx")}
	}
	d.done()
	rd.Status = ReplicaStatus(o.i32("status"))
	o.done()
	return rd
}

func replicasOf(t testing.TB, path string, v any) []ReplicaDescriptor {
	var out []ReplicaDescriptor
	for i, e := range arrOf(t, path, v) {
		out = append(out, replicaOf(t, fmt.Sprintf("%s[%d]", path, i), e))
	}
	return out
}

// requestOf is the Go argument list of call from a row's inputs.
func requestOf(t testing.TB, call string, inputs map[string]any) any {
	t.Helper()
	o := objOf(t, call+".inputs", inputs)
	defer o.done()
	switch call {
	case "ServiceReady":
		return ServiceReadyRequest{}
	case "Ping":
		return PingRequest{ClientID: o.uuid("client_id")}
	case "MountSegment":
		sv, sp := o.get("segment")
		return MountSegmentRequest{Segment: segmentOf(t, sp, sv), ClientID: o.uuid("client_id")}
	case "ReMountSegment":
		sv, sp := o.get("segments")
		var segs []Segment
		for i, e := range arrOf(t, sp, sv) {
			segs = append(segs, segmentOf(t, fmt.Sprintf("%s[%d]", sp, i), e))
		}
		return ReMountSegmentRequest{Segments: segs, ClientID: o.uuid("client_id")}
	case "UnmountSegment":
		return UnmountSegmentRequest{SegmentID: o.uuid("segment_id"), ClientID: o.uuid("client_id")}
	case "PutStart":
		r := PutStartRequest{ClientID: o.uuid("client_id"), Key: o.str("key"), SliceLength: o.u64("slice_length")}
		cv, cp := o.get("config")
		r.Config = configOf(t, cp, cv)
		r.TenantID = o.str("tenant_id")
		return r
	case "PutEnd":
		r := PutEndRequest{ClientID: o.uuid("client_id")}
		mv, mp := o.get("object_meta")
		m := objOf(t, mp, mv)
		r.ObjectMeta = ObjectMeta{Key: m.str("key"), ObjectChecksum: m.optU64("object_checksum")}
		m.done()
		r.ReplicaType = ReplicaType(o.i32("replica_type"))
		r.TenantID = o.str("tenant_id")
		return r
	case "PutRevoke":
		return PutRevokeRequest{ClientID: o.uuid("client_id"), Key: o.str("key"), ReplicaType: ReplicaType(o.i32("replica_type")), TenantID: o.str("tenant_id")}
	case "GetReplicaList":
		return GetReplicaListRequest{Key: o.str("key"), TenantID: o.str("tenant_id")}
	case "ExistKey":
		return ExistKeyRequest{Key: o.str("key"), TenantID: o.str("tenant_id")}
	case "Remove":
		return RemoveRequest{Key: o.str("key"), Force: o.boolean("force"), TenantID: o.str("tenant_id")}
	}
	t.Fatalf("no request conversion for call %q", call)
	return nil
}

// expectedOf is a tl::expected from {"has_value", "value"} or
// {"has_value": false, "error": {"code", "name"}}; the name must be the
// ErrorCode's. value is nil for a void value (no "value" key).
func expectedOf[T any](t testing.TB, path string, output map[string]any, value func(path string, v any) T) Expected[T] {
	t.Helper()
	o := objOf(t, path, output)
	defer o.done()
	if o.boolean("has_value") {
		if value == nil {
			return Ok(*new(T))
		}
		v, p := o.get("value")
		return Ok(value(p, v))
	}
	ev, ep := o.get("error")
	e := objOf(t, ep, ev)
	code := ErrorCode(e.i32("code"))
	if name := e.str("name"); code.String() != name {
		t.Fatalf("%s: ErrorCode(%d).String() = %q, the vector names it %q", ep, int32(code), code.String(), name)
	}
	e.done()
	return Fail[T](code)
}

// responseOf is the Go return value of call from a row's output.
func responseOf(t testing.TB, call string, output map[string]any) any {
	t.Helper()
	path := call + ".output"
	switch call {
	case "ServiceReady":
		return expectedOf(t, path, output, func(p string, v any) string { return strOf(t, p, v) })
	case "Ping":
		return expectedOf(t, path, output, func(p string, v any) PingResponse {
			o := objOf(t, p, v)
			defer o.done()
			return PingResponse{ViewVersionID: o.i64("view_version_id"), ClientStatus: ClientStatus(o.i32("client_status"))}
		})
	case "MountSegment", "ReMountSegment", "UnmountSegment", "PutEnd", "PutRevoke", "Remove":
		return expectedOf[Void](t, path, output, nil)
	case "PutStart":
		return expectedOf(t, path, output, func(p string, v any) []ReplicaDescriptor { return replicasOf(t, p, v) })
	case "GetReplicaList":
		return expectedOf(t, path, output, func(p string, v any) GetReplicaListResponse {
			o := objOf(t, p, v)
			defer o.done()
			rv, rp := o.get("replicas")
			return GetReplicaListResponse{Replicas: replicasOf(t, rp, rv), LeaseTTLMs: o.u64("lease_ttl_ms"), ObjectChecksum: o.optU64("object_checksum")}
		})
	case "ExistKey":
		return expectedOf(t, path, output, func(p string, v any) bool {
			b, ok := v.(bool)
			if !ok {
				t.Fatalf("%s: not a bool: %#v", p, v)
			}
			return b
		})
	}
	t.Fatalf("no response conversion for call %q", call)
	return nil
}
