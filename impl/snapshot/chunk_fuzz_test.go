package snapshot

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/oplogha/oplogha/impl/state"
)

// sampleState is a state of n objects that uses every field of the codec
// (both segment kinds, replicas of every kind and status with every field
// of their kind, client ids, group ids, data types, pinning).
func sampleState(tb testing.TB, n int) *state.State {
	tb.Helper()
	b := state.NewBuilder()
	segs := []state.Segment{
		{Endpoint: "10.0.0.1:7000", Name: "mem", Capacity: 1 << 40, Kind: state.ReplicaMemory},
		{Endpoint: "10.0.0.2:7000", Name: "disk", Capacity: 1 << 40, Kind: state.ReplicaDisk, FilePath: "/data/seg"},
	}
	for _, s := range segs {
		if err := b.AddSegment(s); err != nil {
			tb.Fatal(err)
		}
	}
	statuses := []state.ReplicaStatus{state.ReplicaInitialized, state.ReplicaProcessing, state.ReplicaComplete,
		state.ReplicaRemoved, state.ReplicaFailed, state.ReplicaUndefined}
	for i := 0; i < n; i++ {
		o := state.Object{ClientID: state.UUID{First: uint64(i) << 40, Second: uint64(i % 3)}, Size: uint64(100 + i), DataType: uint32(i % 4), HardPinned: i%2 == 0}
		if i%3 == 0 {
			o.GroupID = "group"
		}
		for r := 0; r <= i%5; r++ {
			st := statuses[(i+r)%len(statuses)]
			var rep state.Replica
			switch r {
			case 0:
				rep = state.Replica{Kind: state.ReplicaMemory, Segment: segs[0].Endpoint, Offset: uint64(i) << 20, Length: o.Size, Protocol: "tcp"}
			case 1:
				rep = state.Replica{Kind: state.ReplicaNoF, Segment: segs[1].Endpoint, Offset: uint64(i) << 20, Length: o.Size, Protocol: "nvmeof"}
			case 2:
				rep = state.Replica{Kind: state.ReplicaDisk, FilePath: fmt.Sprintf("/data/obj/%d", i), Length: o.Size}
			case 3:
				rep = state.Replica{Kind: state.ReplicaLocalDisk, ClientID: state.UUID{First: uint64(i), Second: 1<<64 - 1}, Segment: "client:9000", Length: o.Size}
			case 4:
				rep = state.Replica{Kind: state.ReplicaDFS, FilePath: "/dfs/pool", Offset: uint64(i), Length: o.Size, AlignedSize: 4096, ShardIdx: int32(i%5) - 2}
			}
			rep.ID, rep.Status = uint64(r+1), st
			o.Replicas = append(o.Replicas, rep)
		}
		if err := b.AddObject(state.ObjectKey{Tenant: fmt.Sprintf("tenant-%d", i/5), Key: fmt.Sprintf("key-%04d", i)}, o); err != nil {
			tb.Fatal(err)
		}
	}
	cur := state.Cursor{}
	if n > 0 {
		cur = state.Cursor{BatchID: 1, Seq: uint64(n)}
	}
	st, err := b.Finish(cur)
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

// samplePayload encodes sampleState(n) with the real encoder, cut into
// chunks of chunkObjects.
func samplePayload(tb testing.TB, n, chunkObjects int) ([]byte, *Layout) {
	tb.Helper()
	f, err := os.CreateTemp(tb.TempDir(), "payload")
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	l, err := Encode(sampleState(tb, n).Capture(), f, chunkObjects)
	if err != nil {
		tb.Fatal(err)
	}
	data, err := os.ReadFile(f.Name())
	if err != nil {
		tb.Fatal(err)
	}
	return data, l
}

// preparedRecords are the descriptors and manifests Prepare makes for
// sample states: seeds as the snapshotter writes them.
func preparedRecords(tb testing.TB) (descriptors, manifests [][]byte) {
	tb.Helper()
	for i, shape := range []struct{ n, chunk int }{{0, 8}, {1, 8}, {7, 3}} {
		p, err := Prepare(sampleState(tb, shape.n).Capture(), PrepareSpec{ID: NewID(uint64(min(shape.n, 1)), 0x1f), Prefix: "snapshots/test/x",
			View: uint64(i + 1), WorkDir: tb.TempDir(), ChunkObjects: shape.chunk, CreatedAt: time.UnixMilli(1700000000123)})
		if err != nil {
			tb.Fatal(err)
		}
		p.Close()
		d, err := p.Descriptor.Encode()
		if err != nil {
			tb.Fatal(err)
		}
		m, err := p.Manifest.Encode()
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := DecodeDescriptor(d); err != nil {
			tb.Fatalf("a prepared descriptor does not decode: %v", err)
		}
		if _, err := DecodeManifest(m); err != nil {
			tb.Fatalf("a prepared manifest does not decode: %v", err)
		}
		descriptors, manifests = append(descriptors, d), append(manifests, m)
	}
	return descriptors, manifests
}

type decodedObject struct {
	k state.ObjectKey
	o state.Object
}

// decodeChunks runs the chunk decoder the encoder's decode-check runs
// (decodeBody without a header: chunk records to the end of the stream)
// over segs, a segments record, followed by chunks.
func decodeChunks(segs, chunks []byte) ([]decodedObject, body, error) {
	var objs []decodedObject
	v := Visitor{Object: func(k state.ObjectKey, o state.Object) error {
		objs = append(objs, decodedObject{k, o})
		return nil
	}}
	b, err := decodeBody(bytes.NewReader(append(append([]byte{}, segs...), chunks...)), v, nil)
	return objs, b, err
}

// encodeChunk renders objs as one chunk record #0 with the encoder's record writer.
func encodeChunk(objs []decodedObject) []byte {
	var buf bytes.Buffer
	bw := bufio.NewWriter(&buf)
	startRecord(bw, kindObjects, 0, uint64(len(objs)))
	rw := newRecordWriter(bw)
	for _, d := range objs {
		rw.object(d.k, d.o)
	}
	rw.finish()
	if err := bw.Flush(); err != nil {
		panic(err)
	}
	return buf.Bytes()
}

// seal rewrites the trailer of rec, a single record, to match its body:
// the fuzzer then reaches what the decoder accepts, not only the checksum
// refusal. rec is returned as is when it has no room for a head and trailer.
func seal(rec []byte) []byte {
	n := 6 // magic, version, kind
	if len(rec) < n+trailerSize {
		return rec
	}
	for i := 0; i < 2; i++ { // index, count
		_, k := binary.Uvarint(rec[n:])
		if k <= 0 {
			return rec
		}
		n += k
	}
	if len(rec) < n+trailerSize {
		return rec
	}
	out := bytes.Clone(rec)
	body := out[n : len(out)-trailerSize]
	binary.LittleEndian.PutUint64(out[len(out)-trailerSize:], uint64(len(body)))
	binary.LittleEndian.PutUint64(out[len(out)-8:], crcOf(body))
	return out
}

// FuzzDecodeChunk feeds arbitrary bytes, seeded with chunk records cut out
// of real payloads, to the chunk record decoder behind a valid segments
// record; with sealed, the input is one record whose trailer is made to
// match its body first. It never panics, every refusal is one of the
// package's typed errors, and what it accepts survives a round trip:
// re-encoded by the record writer and decoded again, the objects are the same.
func FuzzDecodeChunk(f *testing.F) {
	var segs []byte
	for _, shape := range []struct{ n, chunk int }{{1, 8}, {7, 3}, {20, 20}} {
		data, l := samplePayload(f, shape.n, shape.chunk)
		segs = data[HeaderSize:l.Parts[0].Size]
		for _, p := range l.Parts[1:] {
			f.Add(data[p.Offset:p.Offset+p.Size], false)
			f.Add(data[p.Offset:p.Offset+p.Size], true)
		}
		f.Add(data[l.Parts[1].Offset:], false) // every chunk record of the payload
	}
	f.Add([]byte{}, false)
	f.Fuzz(func(t *testing.T, chunks []byte, sealed bool) {
		if sealed {
			chunks = seal(chunks)
		}
		objs, b, err := decodeChunks(segs, chunks)
		if err != nil {
			if !typed(err) {
				t.Fatalf("untyped error: %v", err)
			}
			return
		}
		if b.Objects != uint64(len(objs)) || b.Bytes != int64(len(segs)+len(chunks)) {
			t.Fatalf("stats %+v for %d objects in %d bytes", b.Stats, len(objs), len(segs)+len(chunks))
		}
		if len(objs) == 0 {
			return
		}
		again, _, err := decodeChunks(segs, encodeChunk(objs))
		if err != nil {
			t.Fatalf("decoded %d objects that do not decode once re-encoded: %v", len(objs), err)
		}
		if !reflect.DeepEqual(objs, again) {
			t.Fatalf("round trip changed the objects:\n%+v\n%+v", objs, again)
		}
	})
}
