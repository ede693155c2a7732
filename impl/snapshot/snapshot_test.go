package snapshot

import (
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/state"
)

// buildState makes a state of n objects over two segments, through the Builder.
func buildState(t testing.TB, n int) *state.State {
	t.Helper()
	b := state.NewBuilder()
	require.NoError(t, b.AddSegment(state.Segment{Endpoint: "10.0.0.1:7000", Name: "a", Capacity: 1 << 50, Kind: state.ReplicaMemory}))
	require.NoError(t, b.AddSegment(state.Segment{Endpoint: "10.0.0.2:7000", Name: "b", Capacity: 1 << 50, Kind: state.ReplicaDisk, FilePath: "/ssd/b"}))
	for i := 0; i < n; i++ {
		o := state.Object{ClientID: state.UUID{First: 1, Second: 2}, Size: 4096, GroupID: "g", DataType: uint32(i % 3), HardPinned: i%7 == 0,
			Replicas: []state.Replica{{ID: 1, Kind: state.ReplicaMemory, Segment: "10.0.0.1:7000", Offset: uint64(i) * 4096,
				Length: 4096, Status: state.ReplicaComplete}}}
		if i%5 == 0 {
			o.Replicas = append(o.Replicas, state.Replica{ID: 2, Kind: state.ReplicaNoF, Segment: "10.0.0.2:7000",
				Offset: uint64(i) * 4096, Length: 4096, Status: state.ReplicaProcessing})
		}
		require.NoError(t, b.AddObject(state.ObjectKey{Tenant: fmt.Sprintf("t%d", i%4/4), Key: fmt.Sprintf("key-%09d", i)}, o))
	}
	cur := state.Cursor{}
	if n > 0 {
		cur = state.Cursor{BatchID: 77, Seq: 1234}
	}
	s, err := b.Finish(cur)
	require.NoError(t, err)
	return s
}

func encodeToFile(t testing.TB, s *state.State, chunk int) (*os.File, *Layout) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "payload"))
	require.NoError(t, err)
	t.Cleanup(func() { f.Close() })
	l, err := Encode(s.Capture(), f, chunk)
	require.NoError(t, err)
	return f, l
}

func readAll(t testing.TB, f *os.File) []byte {
	t.Helper()
	data, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	return data
}

func TestPayloadRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 9, 10, 11, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			s := buildState(t, n)
			f, l := encodeToFile(t, s, 10)
			wantChunks := (n + 9) / 10
			require.Len(t, l.Parts, 1+wantChunks)
			data := readAll(t, f)
			require.Equal(t, l.Size, int64(len(data)))
			back, h, err := Restore(bytes.NewReader(data))
			require.NoError(t, err)
			require.Equal(t, s.Digest(), back.Digest())
			require.Equal(t, s.Cursor(), back.Cursor())
			require.Equal(t, l.Header, h)
			// Parts tile the stream exactly, each with its own checksum.
			var off int64
			for _, p := range l.Parts {
				require.Equal(t, off, p.Offset)
				off += p.Size
				require.Equal(t, CRC64NVME(p.CRC), CRC64NVME(crcOf(data[p.Offset:p.Offset+p.Size])))
			}
			require.Equal(t, l.Size, off)
		})
	}
}

func TestMillionObjectRoundTrip(t *testing.T) {
	if testing.Short() {
		t.Skip("1M objects")
	}
	s := buildState(t, 1_000_000)
	start := time.Now()
	f, l := encodeToFile(t, s, 100_000)
	t.Logf("encoded 1M objects to %d bytes in %v (%d chunks)", l.Size, time.Since(start), len(l.Parts)-1)
	in, err := os.Open(f.Name())
	require.NoError(t, err)
	defer in.Close()
	back, _, err := Restore(in)
	require.NoError(t, err)
	require.Equal(t, s.Digest(), back.Digest())
}

func TestCorruptionIsDetected(t *testing.T) {
	s := buildState(t, 50)
	f, l := encodeToFile(t, s, 16)
	good := readAll(t, f)
	mutate := func(fn func([]byte) []byte) []byte { return fn(append([]byte(nil), good...)) }
	cases := map[string]struct {
		data []byte
		want error
	}{
		"flipped object byte": {mutate(func(b []byte) []byte { b[l.Parts[2].Offset+20] ^= 0x40; return b }), nil},
		"flipped size byte": {mutate(func(b []byte) []byte {
			// the size uvarint of an object sits after its key (13 bytes) and
			// its client id (two one-byte uvarints); flip a low bit of its
			// second byte, which keeps every field well-formed: only the
			// checksum can tell
			i := bytes.Index(b[l.Parts[2].Offset:], []byte("key-")) + int(l.Parts[2].Offset) + len("key-000000000") + 2
			b[i+1] ^= 0x01
			return b
		}), ErrChecksum},
		"flipped segment byte": {mutate(func(b []byte) []byte { b[HeaderSize+12] ^= 0x01; return b }), nil},
		"flipped header byte":  {mutate(func(b []byte) []byte { b[20] ^= 0x01; return b }), ErrChecksum},
		"bad magic":            {mutate(func(b []byte) []byte { b[0] = 'X'; return b }), ErrMalformed},
		"truncated":            {good[:len(good)-5], ErrTruncated},
		"header only":          {good[:HeaderSize], ErrTruncated},
		"short header":         {good[:10], ErrTruncated},
		"trailing byte":        {append(append([]byte(nil), good...), 0), ErrTrailing},
		"chunk dropped":        {append(append([]byte(nil), good[:l.Parts[1].Offset]...), good[l.Parts[2].Offset:]...), ErrMalformed},
		"chunks swapped": {mutate(func(b []byte) []byte {
			p1, p2 := l.Parts[1], l.Parts[2]
			out := append([]byte(nil), b[:p1.Offset]...)
			out = append(out, b[p2.Offset:p2.Offset+p2.Size]...)
			out = append(out, b[p1.Offset:p1.Offset+p1.Size]...)
			return append(out, b[p2.Offset+p2.Size:]...)
		}), ErrMalformed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, err := Decode(bytes.NewReader(tc.data), Visitor{})
			require.Error(t, err)
			require.True(t, typed(err), "untyped decode error: %v", err)
			if tc.want != nil {
				require.ErrorIs(t, err, tc.want)
			}
		})
	}
}

func TestUnknownVersionsAreRefused(t *testing.T) {
	h := Header{EnvelopeSchemaVersion: 2, PayloadCodecVersion: 1, Cursor: state.Cursor{BatchID: 1, Seq: 1}}
	b := h.Marshal()
	_, err := ParseHeader(b[:])
	require.ErrorIs(t, err, ErrVersion)
	h = Header{EnvelopeSchemaVersion: 1, PayloadCodecVersion: 9}
	b = h.Marshal()
	_, err = ParseHeader(b[:])
	require.ErrorIs(t, err, ErrVersion)
	// Version 1 payloads hold the object records of before upstream's
	// payloads: refused, never decoded with today's record layout.
	h = Header{EnvelopeSchemaVersion: 1, PayloadCodecVersion: 1, Cursor: state.Cursor{BatchID: 1, Seq: 1}}
	b = h.Marshal()
	_, err = ParseHeader(b[:])
	require.ErrorIs(t, err, ErrVersion)
	h = Header{EnvelopeSchemaVersion: 1, PayloadCodecVersion: PayloadCodecVersion, Cursor: state.Cursor{BatchID: 1}}
	b = h.Marshal()
	_, err = ParseHeader(b[:])
	require.ErrorIs(t, err, ErrCursorMismatch)
}

func descriptorFor(t *testing.T, l *Layout, view uint64) (Descriptor, Manifest) {
	t.Helper()
	id := NewID(l.Header.Cursor.BatchID, 0x1f)
	prefix := path.Join("snap", "c1", id.String())
	m := NewManifest(id.String(), view, 16, l)
	d := Descriptor{SnapshotID: id.String(), SchemaVersion: 1, LastIncludedSeq: l.Header.Cursor.Seq, LastIncludedBatchID: l.Header.Cursor.BatchID,
		ProducerViewVersion: view, PayloadChecksum: l.Checksum(), PayloadSize: uint64(l.Size), ManifestKey: path.Join(prefix, ManifestObject),
		ObjectPrefix: prefix, CreatedAtMS: 1_700_000_000_000}
	return d, m
}

func TestDescriptorAndManifestAgree(t *testing.T) {
	s := buildState(t, 40)
	_, l := encodeToFile(t, s, 16)
	d, m := descriptorFor(t, l, 3)
	dj, err := d.Encode()
	require.NoError(t, err)
	d2, err := DecodeDescriptor(dj)
	require.NoError(t, err)
	require.Equal(t, d, d2)
	mj, err := m.Encode()
	require.NoError(t, err)
	m2, err := DecodeManifest(mj)
	require.NoError(t, err)
	require.Equal(t, m, m2)
	require.NoError(t, Agree(d2, m2))
	require.NoError(t, AgreeHeader(l.Header, m2))

	bad := d
	bad.LastIncludedSeq++
	require.ErrorIs(t, Agree(bad, m), ErrIdentity)
	bad = d
	bad.PayloadChecksum = CRC64NVME(1)
	require.ErrorIs(t, Agree(bad, m), ErrIdentity)
	h := l.Header
	h.Cursor.Seq++
	require.ErrorIs(t, AgreeHeader(h, m), ErrCursorMismatch)
	mm := m
	mm.Chunks = mm.Chunks[:1]
	require.Error(t, mm.Validate())
}

func TestDescriptorDecoding(t *testing.T) {
	d, err := DecodeDescriptor([]byte("120|3|1700000000123"))
	require.NoError(t, err)
	require.True(t, d.Legacy())
	require.Equal(t, Descriptor{LastIncludedSeq: 120, ProducerViewVersion: 3, CreatedAtMS: 1700000000123}, d)
	d, err = DecodeDescriptor([]byte("0|0|1"))
	require.NoError(t, err, "a legacy zero cursor is legal")
	require.Zero(t, d.LastIncludedBatchID)
	for raw, want := range map[string]error{
		"1|2":                           ErrMalformed,
		"1|2|3|4":                       ErrMalformed,
		"01|2|3":                        ErrMalformed,
		"x|2|3":                         ErrOverflow,
		"1|2|99999999999999999999":      ErrOverflow,
		`{"schema_version":1}`:          ErrMalformed,
		`{"schema_version":2}`:          ErrVersion,
		`{"snapshot_id":"x","bogus":1}`: ErrMalformed,
	} {
		_, err := DecodeDescriptor([]byte(raw))
		require.ErrorIs(t, err, want, raw)
	}
	// A v1 descriptor whose cursor has exactly one zero field is rejected.
	s := buildState(t, 3)
	_, l := encodeToFile(t, s, 16)
	good, _ := descriptorFor(t, l, 3)
	for _, mutate := range []func(*Descriptor){
		func(d *Descriptor) { d.LastIncludedSeq = 0 },
		func(d *Descriptor) { d.LastIncludedBatchID = 0 },
	} {
		d := good
		mutate(&d)
		_, err := d.Encode()
		require.ErrorIs(t, err, ErrCursorMismatch)
	}
	d = good
	d.PayloadChecksum = "deadbeef"
	_, err = d.Encode()
	require.ErrorIs(t, err, ErrBadChecksumTag)
}

func TestChecksumTags(t *testing.T) {
	c := CRC64NVME(0x0102030405060708)
	require.Equal(t, Checksum("crc64nvme:AQIDBAUGBwg="), c)
	alg, v, err := ParseChecksum(c)
	require.NoError(t, err)
	require.Equal(t, "crc64nvme", alg)
	require.Equal(t, uint64(0x0102030405060708), v)
	for _, bad := range []Checksum{"", "AQIDBAUGBwg=", "crc64nvme:", "crc64nvme:AQID", "md5:AQIDBAUGBwg="} {
		_, _, err := ParseChecksum(bad)
		require.Error(t, err, bad)
	}
}

func TestSnapshotIDs(t *testing.T) {
	id := NewID(42, 0xabc)
	back, err := ParseID(id.String())
	require.NoError(t, err)
	require.Equal(t, id, back)
	require.Less(t, NewID(9, 1).String(), NewID(10, 1).String(), "ids sort by cursor")
	require.NotEqual(t, NewID(1, 1).String(), NewID(1, 1).String(), "two incarnations never collide")
}

func TestBudgetsAreTypedSkipReasons(t *testing.T) {
	dir := t.TempDir()
	free, err := FreeBytes(dir)
	require.NoError(t, err)
	require.Positive(t, free)
	ok := Budget{MaxCaptureBytes: 1 << 40, WorkDir: dir}
	require.NoError(t, ok.Check(EstimateFor(1000)))
	err = Budget{MaxCaptureBytes: 1 << 20, WorkDir: dir}.Check(EstimateFor(1_000_000))
	require.ErrorIs(t, err, ErrCaptureTooLarge)
	require.Equal(t, "memory_budget", SkipReason(err))
	err = ok.Check(Estimate{PayloadBytes: free})
	require.ErrorIs(t, err, ErrDiskBudget)
	require.Equal(t, "disk_budget", SkipReason(err))
	err = ok.Check(Estimate{})
	require.NoError(t, err)
	err = Budget{WorkDir: filepath.Join(dir, "missing")}.Check(Estimate{})
	require.ErrorIs(t, err, ErrDiskBudget, "an unusable work dir is a skip, not a crash")
}
