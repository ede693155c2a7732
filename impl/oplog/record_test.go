package oplog

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/state"
)

func sampleBatch() state.Batch {
	seg := state.Segment{Endpoint: "10.0.0.1:7000", Name: "seg", Capacity: 1 << 30, Kind: state.ReplicaMemory}
	return state.Batch{ID: 7, FirstSeq: 20, LastSeq: 22, Entries: []state.Entry{
		state.MountSegment(seg),
		state.PutEnd("tenant<&>", "key \"quoted\" ünï", state.Object{ClientID: state.UUID{First: 1}, Size: 1, Replicas: []state.Replica{{ID: 1, Kind: state.ReplicaMemory, Segment: seg.Endpoint, Length: 1, Status: state.ReplicaComplete}}}),
		state.Remove("t", "k"),
	}}
}

func TestBatchRecordRoundTrip(t *testing.T) {
	b := sampleBatch()
	rec, err := EncodeBatch(b)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(rec, []byte(`[1,7,20,22,[[5,"default","10.0.0.1:7000","`)), "%s", rec)
	got, err := DecodeBatch(rec)
	require.NoError(t, err)
	require.Equal(t, b, got)
	again, _ := EncodeBatch(got)
	require.Equal(t, rec, again)
}

func TestBatchRecordRejects(t *testing.T) {
	good, err := EncodeBatch(sampleBatch())
	require.NoError(t, err)
	s := string(good)
	lastComma := strings.LastIndexByte(s, ',')
	withSum := func(body string) string { // recompute a valid checksum for a crafted head
		sum := crcOf(body)
		return body[:len(body)-1] + "," + sum + "]"
	}
	cases := map[string]struct {
		rec  string
		want error
	}{
		"not json":            {"[1,7,", ErrMalformed},
		"object":              {`{"a":1}`, ErrMalformed},
		"five elements":       {s[:lastComma] + "]", ErrMalformed},
		"seven elements":      {s[:len(s)-1] + ",1]", ErrMalformed},
		"bad checksum":        {s[:lastComma] + ",12345]", ErrChecksum},
		"flipped payload":     {strings.Replace(s, `"10.0.0.1:7000"`, `"10.0.0.2:7000"`, 1), ErrChecksum},
		"whitespace":          {strings.Replace(s, ",", ", ", 1), ErrNonCanonical},
		"leading zero":        {strings.Replace(s, "[1,7,", "[1,07,", 1), ErrMalformed},
		"negative":            {strings.Replace(s, "[1,7,", "[1,-7,", 1), ErrMalformed},
		"float":               {strings.Replace(s, "[1,7,", "[1,7.0,", 1), ErrMalformed},
		"exponent":            {strings.Replace(s, "[1,7,", "[1,7e0,", 1), ErrMalformed},
		"overflow":            {strings.Replace(s, "[1,7,", "[1,18446744073709551616,", 1), ErrMalformed},
		"version 2":           {withSum(`[2,1,1,1,[[3,"t","k",""]]]`), ErrVersion},
		"span too long":       {withSum(`[1,1,1,2,[[3,"t","k",""]]]`), ErrSpan},
		"last before first":   {withSum(`[1,1,5,4,[[3,"t","k",""]]]`), ErrSpan},
		"no entries":          {withSum(`[1,1,1,0,[]]`), ErrSpan},
		"batch id 0":          {withSum(`[1,0,1,1,[[3,"t","k",""]]]`), ErrSpan},
		"seq 0":               {withSum(`[1,1,0,0,[[3,"t","k",""]]]`), ErrSpan},
		"unknown op":          {withSum(`[1,1,1,1,[[4,"t","k",""]]]`), state.ErrUnknownOp},
		"op overflow":         {withSum(`[1,1,1,1,[[260,"t","k",""]]]`), state.ErrUnknownOp},
		"entry of 3":          {withSum(`[1,1,1,1,[[3,"t","k"]]]`), ErrMalformed},
		"checksum leading 0":  {s[:lastComma+1] + "0" + s[lastComma+1:], ErrMalformed},
		"tenant not a string": {withSum(`[1,1,1,1,[[3,1,"k",""]]]`), ErrMalformed},
		"bad base64":          {withSum(`[1,1,1,1,[[3,"t","k","!!"]]]`), ErrMalformed},
		"unpadded base64":     {withSum(`[1,1,1,1,[[3,"t","k","eA"]]]`), ErrMalformed},
		"escaped slash":       {withSum(`[1,1,1,1,[[3,"t","a\/b",""]]]`), ErrNonCanonical},
		"trailing garbage":    {s + "x", ErrMalformed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeBatch([]byte(tc.rec))
			require.ErrorIs(t, err, tc.want, "%s → %v", tc.rec, err)
		})
	}
}

func TestEncodeRefusesInvalidUTF8(t *testing.T) {
	b := state.Batch{ID: 1, FirstSeq: 1, LastSeq: 1, Entries: []state.Entry{state.Remove("t", "\xff")}}
	_, err := EncodeBatch(b)
	require.ErrorIs(t, err, ErrMalformed)
}

func TestDurablePrefixCodec(t *testing.T) {
	for _, p := range []DurablePrefix{{}, {BatchID: 1, LastSeq: 1}, {BatchID: 5, LastSeq: 900}, {BatchID: 1<<64 - 1, LastSeq: 1<<64 - 1}} {
		got, err := DecodeDurablePrefix(p.Encode())
		require.NoError(t, err)
		require.Equal(t, p, got)
	}
	require.Equal(t, `{"schema_version":1,"batch_id":3,"last_seq":9}`, string(DurablePrefix{BatchID: 3, LastSeq: 9}.Encode()))
	for raw, want := range map[string]error{
		`{"schema_version":1,"batch_id":0,"last_seq":4}`:              ErrMalformed,
		`{"schema_version":1,"batch_id":4,"last_seq":0}`:              ErrMalformed,
		`{"schema_version":1,"batch_id":4,"last_seq":3}`:              ErrMalformed,
		`{"schema_version":2,"batch_id":1,"last_seq":1}`:              ErrVersion,
		`{"batch_id":1,"schema_version":1,"last_seq":1}`:              ErrNonCanonical,
		`{"schema_version":1, "batch_id":1,"last_seq":1}`:             ErrNonCanonical,
		`{"schema_version":1,"batch_id":1}`:                           ErrMalformed,
		`{"schema_version":1,"batch_id":1,"last_seq":1,"x":1}`:        ErrMalformed,
		`{"schema_version":1,"batch_id":"1","last_seq":1}`:            ErrMalformed,
		`{"schema_version":1,"batch_id":1,"last_seq":1,"last_seq":2}`: ErrNonCanonical,
		`[1,1,1]`: ErrMalformed,
		``:        ErrMalformed,
	} {
		_, err := DecodeDurablePrefix([]byte(raw))
		require.ErrorIs(t, err, want, raw)
	}
}

func TestProducerViewCodec(t *testing.T) {
	v, err := DecodeProducerView([]byte("42"))
	require.NoError(t, err)
	require.Equal(t, uint64(42), v)
	require.Equal(t, "42", string(EncodeProducerView(42)))
	for _, raw := range []string{"0", "042", "+1", "-1", "1.0", " 1", "1\n", "", "x", "18446744073709551616"} {
		_, err := DecodeProducerView([]byte(raw))
		require.Error(t, err, "%q", raw)
		require.True(t, errors.Is(err, ErrMalformed) || errors.Is(err, ErrNonCanonical), "%q: %v", raw, err)
	}
}

func TestFloorCodec(t *testing.T) {
	f, err := DecodeFloor(Floor{BatchID: 12}.Encode())
	require.NoError(t, err)
	require.Equal(t, uint64(12), f.BatchID)
	_, err = DecodeFloor([]byte(`{"schema_version":1,"batch_id":012}`))
	require.Error(t, err)
}
