package model

import (
	"encoding/json"
	"testing"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract"
)

// digestBatch is one batch of upstream payloads of every kind: segments
// mounted, updated and unmounted, objects with every replica variant, with
// and without the compatible fields, pinned, in tenant "" and another, and
// an empty PUT_END (hard_pinned unset).
func digestBatch(t *testing.T) batchlog.Batch {
	payloads := map[string]string{}
	readJSONL(t, "payloads.jsonl", func(line []byte) {
		var v payloadVector
		require.NoError(t, json.Unmarshal(line, &v))
		payloads[v.Name] = v.Bytes
	})
	p := func(name string) []byte { return b64(t, payloads[name]) }
	es := []batchlog.Entry{
		{Op: batchlog.OpSegmentMount, Tenant: "default", Key: "a", Payload: p("mount_memory_segment")},
		{Op: batchlog.OpSegmentMount, Tenant: "default", Key: "b", Payload: p("mount_file_segment_max_capacity")},
		{Op: batchlog.OpSegmentMount, Tenant: "default", Key: "c", Payload: p("mount_long_name_utf8_endpoint")},
		{Op: batchlog.OpSegmentMount, Tenant: "default", Key: "", Payload: p("mount_all_empty")},
		{Op: batchlog.OpSegmentUpdate, Tenant: "default", Key: "a", Payload: p("update_capacity")},
		{Op: batchlog.OpSegmentUnmount, Tenant: "default", Key: "", Payload: p("unmount_empty")},
		{Op: batchlog.OpSegmentUnmount, Tenant: "default", Key: "c", Payload: p("unmount_long")}, // not mounted: no-op
		{Op: batchlog.OpPutEnd, Tenant: "", Key: "one", Payload: p("meta_one_memory_replica")},
		{Op: batchlog.OpPutEnd, Tenant: "team-a", Key: "pinned", Payload: p("meta_two_memory_replicas_pinned")},
		{Op: batchlog.OpPutEnd, Tenant: "team-a", Key: "variants", Payload: p("meta_every_variant_alternative")},
		{Op: batchlog.OpPutEnd, Tenant: "team-b", Key: "utf8", Payload: p("meta_utf8_strings")},
		{Op: batchlog.OpPutEnd, Tenant: "default", Key: "absent", Payload: p("meta_compatible_fields_absent")},
		{Op: batchlog.OpPutEnd, Tenant: "default", Key: "twenty", Payload: p("meta_twenty_replicas")},
		{Op: batchlog.OpPutEnd, Tenant: "default", Key: "empty"},
		{Op: batchlog.OpPutEnd, Tenant: "default", Key: "gone", Payload: p("meta_one_memory_replica")},
		{Op: batchlog.OpRemove, Tenant: "", Key: "gone"},
	}
	return batchlog.Batch{ID: 1, FirstSeq: 1, LastSeq: uint64(len(es)), Entries: es}
}

// The contract's digest of a state with every kind of content. The value
// was computed once by the reference master's own digest (impl/state, at
// the commit this file was written against) over the same batch, so that
// the formula written down in digest.go is known to be the one nodes
// report; the real runs (recovered-state) compare the two on every bundle.
func TestDigestOfEveryKindOfContent(t *testing.T) {
	s := New()
	require.NoError(t, s.Apply(digestBatch(t)))
	nObj, nSeg := s.Len()
	require.Equal(t, []int{7, 3}, []int{nObj, nSeg})
	require.Equal(t, goldenDigest, s.Digest())
	require.Equal(t, goldenEmptyDigest, New().Digest())
}

const (
	goldenDigest      = "sha256:73eea896c8d6d776cc6b52f5fd6fc20d603311f39e7f3faed7133b231cedf1ba"
	goldenEmptyDigest = "sha256:0e5adcb9a9ee23d5adbf8ec7d9589d68a7b51270256153fb2fbc5e2578316b0a"
)

// The digest is of the content, not of its history: the same content
// reached by other batches (or started from a snapshot) has the same
// digest; the cursor is not in it.
func TestDigestIsOfContentOnly(t *testing.T) {
	a := New()
	require.NoError(t, a.Apply(digestBatch(t)))
	objs := map[ObjectKey]Object{}
	for _, k := range a.Keys() {
		objs[k], _ = a.Object(k.Tenant, k.Key)
	}
	var segs []Segment
	for _, ep := range a.Endpoints() {
		s, _ := a.Segment(ep)
		segs = append(segs, s)
	}
	b, err := FromSnapshot(contract.Cursor{BatchID: 9, Seq: 99}, segs, objs)
	require.NoError(t, err)
	require.Equal(t, a.Digest(), b.Digest())

	// hard_pinned's three states hash apart: unset is not false …
	o, _ := b.Object("default", "empty")
	require.Equal(t, PinUnset, o.HardPinned)
	o.HardPinned = PinFalse
	objs[Key("default", "empty")] = o
	c, err := FromSnapshot(contract.Cursor{}, segs, objs)
	require.NoError(t, err)
	require.NotEqual(t, a.Digest(), c.Digest())
	// … nor true.
	o.HardPinned = PinTrue
	objs[Key("default", "empty")] = o
	c, err = FromSnapshot(contract.Cursor{}, segs, objs)
	require.NoError(t, err)
	require.NotEqual(t, a.Digest(), c.Digest())
}
