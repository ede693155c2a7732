package oplog

import (
	"fmt"
	"testing"

	"github.com/oplogha/oplogha/impl/state"
)

// The replay path without etcd: records as a primary writes them (batch 1
// mounts 17 segments, every later batch puts 16 objects shaped like a
// Mooncake master's), decoded and applied in order. tests/bench
// SuffixReplay measures the same with etcd's range reads in front.

const replayEntries = 16

func replaySegment(i int) state.Segment {
	return state.Segment{Endpoint: fmt.Sprintf("10.0.%d.%d:7000", i/8, i%8), Name: fmt.Sprintf("seg-%02d", i), Capacity: 1 << 50, Kind: state.ReplicaMemory}
}

func replayObject(i int) state.Object {
	seg := replaySegment(i % 16)
	reps := []state.Replica{{ID: uint64(i)*2 + 1, Kind: state.ReplicaMemory, Segment: seg.Endpoint,
		Offset: uint64(i) * 65536, Length: 65536, Status: state.ReplicaComplete}}
	if i%4 == 0 {
		reps = append(reps, state.Replica{ID: uint64(i)*2 + 2, Kind: state.ReplicaNoF, Segment: "10.9.0.1:7000",
			Offset: uint64(i) * 65536, Length: 65536, Status: state.ReplicaComplete})
	}
	return state.Object{ClientID: state.UUID{Second: uint64(i % 8)}, Size: 65536, Replicas: reps}
}

// replayRecords encodes batches 1..n.
func replayRecords(tb testing.TB, n int) [][]byte {
	tb.Helper()
	var recs [][]byte
	var seq uint64
	add := func(entries []state.Entry) {
		b := state.Batch{ID: uint64(len(recs) + 1), FirstSeq: seq + 1, LastSeq: seq + uint64(len(entries)), Entries: entries}
		rec, err := EncodeBatch(b)
		if err != nil {
			tb.Fatal(err)
		}
		recs = append(recs, rec)
		seq = b.LastSeq
	}
	var mounts []state.Entry
	for i := range 17 {
		mounts = append(mounts, state.MountSegment(replaySegment(i)))
	}
	add(mounts)
	obj := 0
	for len(recs) < n {
		entries := make([]state.Entry, replayEntries)
		for j := range entries {
			entries[j] = state.PutEnd("tenant-0", fmt.Sprintf("replay/%08d", obj), replayObject(obj))
			obj++
		}
		add(entries)
	}
	return recs
}

// BenchmarkReplay decodes and applies 10k records into a fresh state per
// iteration (what a standby's suffix replay costs besides the range reads).
func BenchmarkReplay(b *testing.B) {
	const n = 10_000
	recs := replayRecords(b, n)
	var size int64
	for _, r := range recs {
		size += int64(len(r))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		st := state.New()
		for _, rec := range recs {
			bt, err := DecodeBatch(rec)
			if err != nil {
				b.Fatal(err)
			}
			if err := st.Apply(bt); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "batches/s")
}
