package state

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func memSeg(ep string) Segment {
	return Segment{Endpoint: ep, Name: "seg-" + ep, Capacity: 1 << 40, Kind: ReplicaMemory}
}

func obj(seg string, id uint64) Object {
	return Object{ClientID: UUID{1, 2}, Size: 4096,
		Replicas: []Replica{{ID: id, Kind: ReplicaMemory, Segment: seg, Offset: id * 4096,
			Length: 4096, Status: ReplicaComplete, Protocol: "tcp"}}}
}

// batcher builds continuous batches.
type batcher struct {
	id, seq uint64
}

func (b *batcher) next(entries ...Entry) Batch {
	b.id++
	bt := Batch{ID: b.id, FirstSeq: b.seq + 1, LastSeq: b.seq + uint64(len(entries)), Entries: entries}
	b.seq += uint64(len(entries))
	return bt
}

func TestApplyEveryOp(t *testing.T) {
	s := New()
	var bb batcher
	require.NoError(t, s.Apply(bb.next(MountSegment(memSeg("10.0.0.1:1")), MountSegment(memSeg("10.0.0.2:1")))))
	o := obj("10.0.0.1:1", 1)
	o.Replicas = append(o.Replicas, Replica{ID: 2, Kind: ReplicaMemory, Segment: "10.0.0.2:1", Length: 4096, Status: ReplicaComplete})
	require.NoError(t, s.Apply(bb.next(PutEnd("t1", "a", o), PutEnd("t1", "b", obj("10.0.0.1:1", 3)), PutEnd("t2", "a", obj("10.0.0.2:1", 4)))))
	require.Equal(t, Cursor{BatchID: 2, Seq: 5}, s.Cursor())
	got, ok := s.Object("t1", "a")
	require.True(t, ok)
	require.Equal(t, o, got)

	require.NoError(t, s.Apply(bb.next(Remove("t1", "b"), PutRevoke("t9", "never-put"))))
	_, ok = s.Object("t1", "b")
	require.False(t, ok)

	upd := memSeg("10.0.0.2:1")
	upd.Name = "renamed"
	require.NoError(t, s.Apply(bb.next(UpdateSegment(upd))))
	seg, _ := s.Segment("10.0.0.2:1")
	require.Equal(t, "renamed", seg.Name)

	// Unmount drops the segment only: upstream's registry knows no objects.
	require.NoError(t, s.Apply(bb.next(UnmountSegment("10.0.0.2:1"))))
	got, ok = s.Object("t1", "a")
	require.True(t, ok)
	require.Len(t, got.Replicas, 2)
	_, ok = s.Object("t2", "a")
	require.True(t, ok)
	nObj, nSeg := s.Len()
	require.Equal(t, [2]int{2, 1}, [2]int{nObj, nSeg})
}

// Every replica variant and field survives its PUT_END payload, and the
// entries are the struct_pack records upstream writes (NDEBUG variant).
func TestPayloadsRoundTripEveryField(t *testing.T) {
	o := Object{ClientID: UUID{7, 8}, Size: 100, GroupID: "g", DataType: 9, HardPinned: true, Replicas: []Replica{
		{ID: 1, Kind: ReplicaMemory, Segment: "m:1", Offset: 4096, Length: 100, Status: ReplicaComplete, Protocol: "rdma"},
		{ID: 2, Kind: ReplicaNoF, Segment: "n:1", Offset: 8, Length: 100, Status: ReplicaProcessing, Protocol: "nvmeof"},
		{ID: 3, Kind: ReplicaDisk, FilePath: "/d/x", Length: 100, Status: ReplicaInitialized},
		{ID: 4, Kind: ReplicaLocalDisk, ClientID: UUID{5, 6}, Segment: "l:1", Length: 100, Status: ReplicaFailed},
		{ID: 5, Kind: ReplicaDFS, FilePath: "/dfs/x", Offset: 3, Length: 100, AlignedSize: 4096, ShardIdx: -2, Status: ReplicaRemoved},
		{ID: 6, Kind: ReplicaMemory, Segment: "m:1", Length: 1, Status: ReplicaUndefined},
	}}
	e := PutEnd("t", "k", o)
	require.NotEmpty(t, e.Payload)
	got, err := DecodeObject(e.Payload)
	require.NoError(t, err)
	require.Equal(t, o, got)

	seg := Segment{Endpoint: "h:1", Name: "ssd", Capacity: 5, Kind: ReplicaDisk, FilePath: "/p"}
	for _, e := range []Entry{MountSegment(seg), UpdateSegment(seg)} {
		require.Equal(t, DefaultTenant, e.Tenant)
		require.Equal(t, "h:1", e.Key)
		got, err := DecodeSegment(e.Op, e.Payload)
		require.NoError(t, err)
		require.Equal(t, seg, got)
	}
	u := UnmountSegment("h:1")
	ep, err := DecodeUnmount(u.Payload)
	require.NoError(t, err)
	require.Equal(t, "h:1", ep)

	// A replica with a field its kind does not have has no payload form.
	bad := obj("m:1", 1)
	bad.Replicas[0].FilePath = "/x"
	_, err = DecodeObject(PutEnd("t", "k", bad).Payload)
	require.NoError(t, err, "the payload drops the field")
	require.ErrorIs(t, New().Begin().Stage(Entry{Op: OpPutEnd, Tenant: "t", Key: "k",
		Payload: PutEnd("t", "k", Object{Size: 1,
			Replicas: []Replica{{Kind: "tape", Length: 1, Status: ReplicaComplete}}}).Payload}), ErrMalformed)
}

// Upstream's applier semantics (apply.go): what a standby builds from
// entries a primary of this project would refuse.
func TestApplyFollowsUpstreamApplier(t *testing.T) {
	s := New()
	var bb batcher
	o1, o2 := obj("nowhere", 1), obj("nowhere", 2)
	require.NoError(t, s.Apply(bb.next(
		PutEnd("", "k", o1),        // tenant "" is "default"; no segment needed
		PutEnd("default", "k", o2), // PUT_END on an existing key replaces it
		Remove("t", "absent"),      // REMOVE of a missing key: no-op
		PutRevoke("t", "absent"),
		Entry{Op: OpPutEnd, Tenant: "t", Key: "empty"}, // empty payload: empty object
		Entry{Op: OpPutEnd, Tenant: "t", Key: "garbage", Payload: []byte{1, 2}}, // undecodable: empty object
	)))
	got, ok := s.Object("", "k")
	require.True(t, ok)
	require.Equal(t, o2, got)
	got, ok = s.Object("default", "k")
	require.True(t, ok)
	require.Equal(t, o2, got)
	for _, k := range []string{"empty", "garbage"} {
		got, ok = s.Object("t", k)
		require.True(t, ok, k)
		require.Equal(t, Object{HardPinnedUnset: true}, got, k) // upstream: empty metadata, hard_pinned nullopt
	}
	// Segment ops: the payload's endpoint names the segment, whatever the
	// entry's tenant and key; mount and update upsert; unmount of a missing
	// one and undecodable payloads change nothing.
	a := memSeg("10.0.0.1:1")
	remount := MountSegment(a)
	remount.Tenant, remount.Key = "", a.Name
	a2 := a
	a2.Capacity = 7
	require.NoError(t, s.Apply(bb.next(remount, MountSegment(a2), UpdateSegment(memSeg("new:1")),
		UnmountSegment("absent:1"),
		Entry{Op: OpSegmentMount, Tenant: DefaultTenant, Key: "x", Payload: []byte("junk")},
		Entry{Op: OpSegmentUnmount, Tenant: DefaultTenant, Key: "new:1"},
	)))
	seg, ok := s.Segment("10.0.0.1:1")
	require.True(t, ok)
	require.Equal(t, a2, seg)
	_, ok = s.Segment("new:1")
	require.True(t, ok, "an unmount without a payload is undecodable: a no-op")
	_, nSeg := s.Len()
	require.Equal(t, 2, nSeg)

	// LEASE_RENEW is rejected, and the batch with it.
	before := s.Digest()
	err := s.Apply(bb.nextAt(s, Remove("default", "k"), Entry{Op: OpLeaseRenew, Tenant: "t", Key: "k"}))
	require.ErrorIs(t, err, ErrUnknownOp)
	require.Equal(t, before, s.Digest())
}

func TestStageAdmitsWithTypedErrors(t *testing.T) {
	base := func() *State {
		s := New()
		bb := &batcher{}
		require.NoError(t, s.Apply(bb.next(MountSegment(memSeg("s1")), PutEnd("t", "k", obj("s1", 1)))))
		return s
	}
	disk := Segment{Endpoint: "d1", Name: "d", Capacity: 10, Kind: ReplicaDisk}
	cases := []struct {
		name  string
		entry Entry
		want  error
	}{
		{"unknown op 4", Entry{Op: 4, Tenant: "t", Key: "x"}, ErrUnknownOp},
		{"unknown op 200", Entry{Op: 200, Tenant: "t", Key: "x"}, ErrUnknownOp},
		{"put existing", PutEnd("t", "k", obj("s1", 2)), ErrObjectExists},
		{"put existing under the default tenant", PutEnd("default", "k2", obj("s1", 2)), nil},
		{"put on unmounted segment", PutEnd("t", "new", obj("nowhere", 2)), ErrSegmentNotFound},
		{"put past capacity", PutEnd("t", "new",
			Object{Size: 1, Replicas: []Replica{{ID: 1, Kind: ReplicaMemory, Segment: "s1", Offset: 1 << 40, Length: 1,
				Status: ReplicaComplete}}}), ErrSegmentMismatch},
		{"put nof on a memory segment",
			PutEnd("t", "new", Object{Size: 1, Replicas: []Replica{{ID: 1, Kind: ReplicaNoF, Segment: "s1", Length: 1,
				Status: ReplicaComplete}}}), ErrSegmentMismatch},
		{"put no replicas", PutEnd("t", "new", Object{Size: 1}), ErrMalformed},
		{"put zero size", PutEnd("t", "new", Object{Replicas: obj("s1", 1).Replicas}), ErrMalformed},
		{"put duplicate replica id", PutEnd("t", "new", Object{Size: 1, Replicas: []Replica{
			{ID: 1, Kind: ReplicaMemory, Segment: "s1", Length: 1, Status: ReplicaComplete},
			{ID: 1, Kind: ReplicaMemory, Segment: "s1", Offset: 5, Length: 1, Status: ReplicaComplete}}}), ErrMalformed},
		{"put trailing data", Entry{Op: OpPutEnd, Tenant: "t", Key: "new", Payload: append(PutEnd("t", "n", obj("s1", 9)).Payload, 0)}, ErrMalformed},
		{"put not struct_pack", Entry{Op: OpPutEnd, Tenant: "t", Key: "new", Payload: []byte("\x00\x01")}, ErrMalformed},
		{"put empty payload", Entry{Op: OpPutEnd, Tenant: "t", Key: "new"}, ErrMalformed},
		{"put empty key", PutEnd("t", "", obj("s1", 2)), ErrMalformed},
		{"key too long", PutEnd("t", string(make([]byte, MaxKeyBytes+1)), obj("s1", 2)), ErrMalformed},
		{"remove absent", Remove("t", "absent"), ErrObjectNotFound},
		{"remove with payload", Entry{Op: OpRemove, Tenant: "t", Key: "k", Payload: []byte("x")}, ErrMalformed},
		{"mount twice", MountSegment(memSeg("s1")), ErrSegmentExists},
		{"mount key is not the endpoint", Entry{Op: OpSegmentMount, Key: "s2", Payload: MountSegment(memSeg("s3")).Payload}, ErrMalformed},
		{"mount disk without path", MountSegment(disk), ErrMalformed},
		{"mount with a tenant", Entry{Op: OpSegmentMount, Tenant: "t", Key: "s2", Payload: MountSegment(memSeg("s2")).Payload}, ErrMalformed},
		{"mount with tenant \"\"", Entry{Op: OpSegmentMount, Key: "s2", Payload: MountSegment(memSeg("s2")).Payload}, nil},
		{"mount with an update payload", Entry{Op: OpSegmentMount, Tenant: DefaultTenant, Key: "s2", Payload: []byte("junk")}, ErrMalformed},
		{"unmount absent", UnmountSegment("nope"), ErrSegmentNotFound},
		{"unmount without payload", Entry{Op: OpSegmentUnmount, Tenant: DefaultTenant, Key: "s1"}, ErrMalformed},
		{"update absent", UpdateSegment(memSeg("nope")), ErrSegmentNotFound},
		{"update changes kind", UpdateSegment(Segment{Endpoint: "s1", Name: "x", Capacity: 1, Kind: ReplicaDisk, FilePath: "/x"}), ErrSegmentMismatch},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			tx := s.Begin()
			require.NoError(t, tx.Stage(MountSegment(memSeg("fresh"))))
			before := tx.Reader().Digest()
			err := tx.Stage(tc.entry)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
			require.Equal(t, before, tx.Reader().Digest())
			require.Equal(t, 1, tx.Staged())
		})
	}
}

func TestApplyRequiresContinuity(t *testing.T) {
	s := New()
	e := MountSegment(memSeg("s1"))
	for _, b := range []Batch{
		{ID: 2, FirstSeq: 1, LastSeq: 1, Entries: []Entry{e}}, // skips batch 1
		{ID: 1, FirstSeq: 2, LastSeq: 2, Entries: []Entry{e}}, // skips seq 1
		{ID: 1, FirstSeq: 1, LastSeq: 2, Entries: []Entry{e}}, // span/entries mismatch
		{ID: 1, FirstSeq: 1, LastSeq: 0, Entries: []Entry{}},  // empty
	} {
		err := s.Apply(b)
		require.Error(t, err, "%+v", b)
		require.True(t, errors.Is(err, ErrDiscontinuous) || errors.Is(err, ErrInvalidBatchSpan), "%v", err)
		require.Equal(t, Cursor{}, s.Cursor())
	}
	require.NoError(t, s.Apply(Batch{ID: 1, FirstSeq: 1, LastSeq: 1, Entries: []Entry{e}}))
	require.ErrorIs(t, s.Apply(Batch{ID: 1, FirstSeq: 2, LastSeq: 2, Entries: []Entry{MountSegment(memSeg("s2"))}}), ErrDiscontinuous)
}

func TestDigestIsOrderIndependentAndContentSensitive(t *testing.T) {
	a, b := New(), New()
	var ba, bbb batcher
	require.NoError(t, a.Apply(ba.next(MountSegment(memSeg("s1")))))
	require.NoError(t, b.Apply(bbb.next(MountSegment(memSeg("s1")))))
	for i := 0; i < 100; i++ {
		require.NoError(t, a.Apply(ba.next(PutEnd("t", fmt.Sprintf("k%03d", i), obj("s1", uint64(i))))))
	}
	for i := 99; i >= 0; i-- { // reverse order, different batching
		require.NoError(t, b.Apply(bbb.next(PutEnd("t", fmt.Sprintf("k%03d", i), obj("s1", uint64(i))))))
	}
	require.Equal(t, a.Digest(), b.Digest())

	o := obj("s1", 7)
	o.Size = 4097 // one field differs
	require.NoError(t, b.Apply(bbb.next(Remove("t", "k007"), PutEnd("t", "k007", o))))
	require.NotEqual(t, a.Digest(), b.Digest())

	// Tenant/key boundaries are length-prefixed: ("ab","c") differs from ("a","bc").
	x, y := New(), New()
	var bx, by batcher
	require.NoError(t, x.Apply(bx.next(MountSegment(memSeg("s1")), PutEnd("ab", "c", obj("s1", 1)))))
	require.NoError(t, y.Apply(by.next(MountSegment(memSeg("s1")), PutEnd("a", "bc", obj("s1", 1)))))
	require.NotEqual(t, x.Digest(), y.Digest())
}

func TestTxCommitAndDrop(t *testing.T) {
	s := New()
	var bb batcher
	require.NoError(t, s.Apply(bb.next(MountSegment(memSeg("s1")))))
	before := s.Digest()

	tx := s.Begin()
	require.NoError(t, tx.Stage(PutEnd("t", "a", obj("s1", 1))))
	require.ErrorIs(t, tx.Stage(PutEnd("t", "a", obj("s1", 2))), ErrObjectExists) // sees its own staged entry
	require.NoError(t, tx.Stage(Remove("t", "a")))
	require.Equal(t, 2, tx.Staged())
	require.Equal(t, before, s.Digest(), "staging does not touch the state")
	// Dropped: nothing changes. A new Tx commits.
	tx2 := s.Begin()
	require.NoError(t, tx2.Stage(PutEnd("t", "b", obj("s1", 3))))
	require.ErrorIs(t, s.Commit(tx2, Batch{ID: 2, FirstSeq: 2, LastSeq: 3, Entries: make([]Entry, 2)}), ErrInvalidBatchSpan)
	require.NoError(t, s.Commit(tx2, Batch{ID: 2, FirstSeq: 2, LastSeq: 2, Entries: []Entry{PutEnd("t", "b", obj("s1", 3))}}))
	_, ok := s.Object("t", "b")
	require.True(t, ok)
	// A Tx begun before another commit is stale.
	stale := s.Begin()
	require.NoError(t, s.Apply(bb.nextAt(s, Remove("t", "b"))))
	require.NoError(t, stale.Stage(Remove("t", "b")))
	require.ErrorIs(t, s.Commit(stale, bb.nextAt(s, Remove("t", "b"))), ErrDiscontinuous)
}

// Apply changes the state in place (no fork per batch): a Capture and an
// open Tx taken before see nothing of it, and the Tx cannot commit.
func TestApplyInPlaceLeavesForksAlone(t *testing.T) {
	s := New()
	var bb batcher
	require.NoError(t, s.Apply(bb.next(MountSegment(memSeg("s1")), PutEnd("t", "a", obj("s1", 1)))))
	c := s.Capture()
	want := c.Digest()
	tx := s.Begin()
	require.NoError(t, tx.Stage(PutEnd("t", "b", obj("s1", 2))))
	for i := range 600 { // enough to split nodes the forks share
		require.NoError(t, s.Apply(bb.nextAt(s, PutEnd("t", fmt.Sprintf("k%04d", i), obj("s1", uint64(10+i))), Remove("t", "a"))))
	}
	require.Equal(t, want, c.Digest(), "capture changed under later applies")
	n, _ := s.Len()
	require.Equal(t, 600, n)
	_, ok := tx.Reader().Object("t", "a")
	require.True(t, ok, "the Tx lost an object the state removed")
	n, _ = tx.Reader().Len()
	require.Equal(t, 2, n)
	require.ErrorIs(t, s.Commit(tx, bb.nextAt(s, PutEnd("t", "b", obj("s1", 2)))), ErrDiscontinuous)
}

func (b *batcher) nextAt(s *State, entries ...Entry) Batch {
	b.id, b.seq = s.Cursor().BatchID, s.Cursor().Seq
	return b.next(entries...)
}

// loadObjects fills s with n objects directly (sorted), for size tests.
func loadObjects(s *State, n int) {
	seg := memSeg("s1")
	s.segments.Set(segmentItem{s: &seg})
	for i := 0; i < n; i++ {
		o := obj("s1", uint64(i))
		s.objects.Load(objectItem{k: ObjectKey{Tenant: "t", Key: fmt.Sprintf("k%09d", i)}, o: &o})
	}
	s.cursor = Cursor{BatchID: 1, Seq: uint64(n) + 1}
}

func TestCaptureIsConstantTimeAndImmutable(t *testing.T) {
	if testing.Short() {
		t.Skip("1M objects")
	}
	small, big := New(), New()
	loadObjects(small, 1000)
	loadObjects(big, 1_000_000)
	// O(1): Capture allocates the same at 1k and 1M objects (no node is copied).
	allocSmall := testing.AllocsPerRun(100, func() { _ = small.Capture() })
	allocBig := testing.AllocsPerRun(100, func() { _ = big.Capture() })
	require.Equal(t, allocSmall, allocBig)
	start := time.Now()
	c := big.Capture()
	t.Logf("Capture of 1M objects: %v, %v allocs", time.Since(start), allocBig)

	want := c.Digest()
	wantCur := c.Cursor()
	// 100k later applies (puts, removes, a segment update) do not change the capture.
	bb := batcher{id: big.Cursor().BatchID, seq: big.Cursor().Seq}
	for i := 0; i < 100_000; i += 100 {
		entries := make([]Entry, 0, 100)
		for j := i; j < i+100; j++ {
			if j%2 == 0 {
				entries = append(entries, Remove("t", fmt.Sprintf("k%09d", j)))
			} else {
				entries = append(entries, PutEnd("u", fmt.Sprintf("n%09d", j), obj("s1", uint64(j))))
			}
		}
		require.NoError(t, big.Apply(bb.next(entries...)))
	}
	upd := memSeg("s1")
	upd.Name = "changed"
	require.NoError(t, big.Apply(bb.next(UpdateSegment(upd))))
	require.NotEqual(t, want, big.Digest())
	require.Equal(t, want, c.Digest(), "capture changed under later applies")
	require.Equal(t, wantCur, c.Cursor())
	n, _ := c.Len()
	require.Equal(t, 1_000_000, n)
}

func BenchmarkCapture1M(b *testing.B) {
	s := New()
	loadObjects(s, 1_000_000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		_ = s.Capture()
	}
}

// Errors reach logs, and the RFC forbids logging tenant keys: the builder
// names an object given twice, or an invalid one, by its position.
func TestBuilderErrorsNameNoTenantKey(t *testing.T) {
	b := NewBuilder()
	require.NoError(t, b.AddSegment(memSeg("s1")))
	require.NoError(t, b.AddObject(ObjectKey{Tenant: "tenant-secret", Key: "zz-private-key"}, obj("s1", 1)))
	require.NoError(t, b.AddObject(ObjectKey{Tenant: "tenant-secret", Key: "aa-private-key"}, obj("s1", 2)), "any order")
	err := b.AddObject(ObjectKey{Tenant: "tenant-secret", Key: "zz-private-key"}, obj("s1", 3))
	require.ErrorIs(t, err, ErrMalformed)
	require.NotContains(t, err.Error(), "private-key")
	require.NotContains(t, err.Error(), "tenant-secret")
	require.Contains(t, err.Error(), "object 2")
	require.ErrorIs(t, NewBuilderWith(t, memSeg("s1")).AddSegment(memSeg("s1")), ErrMalformed, "a segment given twice")

	b = NewBuilder()
	bad := obj("s1", 1)
	bad.Replicas[0].Kind = "tape"
	err = b.AddObject(ObjectKey{Tenant: "tenant-secret", Key: "k-private"}, bad)
	require.ErrorIs(t, err, ErrMalformed)
	require.NotContains(t, err.Error(), "k-private")
	require.NotContains(t, err.Error(), "tenant-secret")
}

// NewBuilderWith is a builder holding segs.
func NewBuilderWith(t *testing.T, segs ...Segment) *Builder {
	b := NewBuilder()
	for _, s := range segs {
		require.NoError(t, b.AddSegment(s))
	}
	return b
}

// TestBuilderTakesAnyOrder: objects and segments added in any order build
// the state a sorted load builds (upstream's writer copies hash maps).
func TestBuilderTakesAnyOrder(t *testing.T) {
	sorted, shuffled := NewBuilder(), NewBuilder()
	segs := []Segment{memSeg("s1"), memSeg("s2"), memSeg("s3")}
	for i := range segs {
		require.NoError(t, sorted.AddSegment(segs[i]))
		require.NoError(t, shuffled.AddSegment(segs[(i+2)%3]))
	}
	keys := []string{"a", "b", "c", "d", "e", "f", "g"}
	for i := range keys {
		require.NoError(t, sorted.AddObject(ObjectKey{"t", keys[i]}, obj("s1", uint64(i+1))))
	}
	for _, i := range []int{3, 0, 6, 1, 5, 2, 4} {
		require.NoError(t, shuffled.AddObject(ObjectKey{"t", keys[i]}, obj("s1", uint64(i+1))))
	}
	a, err := sorted.Finish(Cursor{BatchID: 1, Seq: 1})
	require.NoError(t, err)
	b, err := shuffled.Finish(Cursor{BatchID: 1, Seq: 1})
	require.NoError(t, err)
	require.Equal(t, a.Digest(), b.Digest())
	n, m := a.Len()
	require.Equal(t, [2]int{7, 3}, [2]int{n, m})
}
