package oplog

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	"github.com/OneOfOne/xxhash"
	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/impl/contract"
	"github.com/oplogha/oplogha/impl/state"
)

func sampleBatch() state.Batch {
	seg := state.Segment{Endpoint: "10.0.0.1:7000", Name: "seg", Capacity: 1 << 30, Kind: state.ReplicaMemory}
	return state.Batch{ID: 7, FirstSeq: 20, LastSeq: 22, Entries: []state.Entry{
		state.MountSegment(seg),
		state.PutEnd("tenant<&>", "key \"quoted\" ünï", state.Object{ClientID: state.UUID{First: 1}, Size: 1,
			Replicas: []state.Replica{{ID: 1, Kind: state.ReplicaMemory, Segment: seg.Endpoint,
				Length: 1, Status: state.ReplicaComplete}}}),
		state.Remove("t", "k"),
	}}
}

// withSum completes a crafted five-element head into a record with the
// checksum upstream computes for it (XXH32, seed 0, over the head as
// written: the head must be in jsoncpp's form for the sum to match).
func withSum(head string) string {
	sum := xxhash.Checksum32S([]byte(head), 0)
	return head[:len(head)-1] + "," + strconv.FormatUint(uint64(sum), 10) + "]"
}

// The record is contract's (upstream's) byte for byte: payload bytes pass
// through unchanged, and it decodes back to the same batch.
func TestBatchRecordRoundTrip(t *testing.T) {
	b := sampleBatch()
	rec, err := EncodeBatch(b)
	require.NoError(t, err)
	require.True(t, bytes.HasPrefix(rec, []byte(`[1,7,20,22,[[5,"default","10.0.0.1:7000","`)), "%s", rec)
	require.Contains(t, string(rec), `"tenant<&>","key \"quoted\" \u00fcn\u00ef"`, "jsoncpp's escaping")
	cb := batchlog.Batch{ID: b.ID, FirstSeq: b.FirstSeq, LastSeq: b.LastSeq}
	for _, e := range b.Entries {
		cb.Entries = append(cb.Entries, batchlog.Entry{Op: batchlog.OpType(e.Op), Tenant: e.Tenant, Key: e.Key, Payload: e.Payload})
	}
	want, err := batchlog.EncodeBatch(cb)
	require.NoError(t, err)
	require.Equal(t, string(want), string(rec))
	got, err := DecodeBatch(rec)
	require.NoError(t, err)
	require.Equal(t, b, got)
}

// What upstream's decoder refuses is refused, each with the kind callers
// branch on, wrapping contract's.
func TestBatchRecordRejects(t *testing.T) {
	good, err := EncodeBatch(sampleBatch())
	require.NoError(t, err)
	s := string(good)
	lastComma := strings.LastIndexByte(s, ',')
	cases := map[string]struct {
		rec       string
		want, cwe error
	}{
		"not json":            {"[1,7,", ErrMalformed, contract.ErrMalformed},
		"object":              {`{"a":1}`, ErrMalformed, contract.ErrMalformed},
		"five elements":       {s[:lastComma] + "]", ErrMalformed, contract.ErrMalformed},
		"seven elements":      {s[:len(s)-1] + ",1]", ErrMalformed, contract.ErrMalformed},
		"bad checksum":        {s[:lastComma] + ",12345]", ErrChecksum, contract.ErrChecksum},
		"flipped payload":     {strings.Replace(s, `"10.0.0.1:7000"`, `"10.0.0.2:7000"`, 1), ErrChecksum, contract.ErrChecksum},
		"real batch id":       {strings.Replace(s, "[1,7,", "[1,7.0,", 1), ErrChecksum, contract.ErrChecksum},
		"leading zero":        {strings.Replace(s, "[1,7,", "[1,07,", 1), ErrMalformed, contract.ErrMalformed},
		"negative":            {strings.Replace(s, "[1,7,", "[1,-7,", 1), ErrMalformed, contract.ErrMalformed},
		"fraction":            {strings.Replace(s, "[1,7,", "[1,7.5,", 1), ErrMalformed, contract.ErrMalformed},
		"overflow":            {strings.Replace(s, "[1,7,", "[1,18446744073709551616,", 1), ErrMalformed, contract.ErrMalformed},
		"version 2":           {withSum(`[2,1,1,1,[[3,"t","k",""]]]`), ErrVersion, contract.ErrVersion},
		"span too long":       {withSum(`[1,1,1,2,[[3,"t","k",""]]]`), ErrSpan, contract.ErrSpan},
		"last before first":   {withSum(`[1,1,5,4,[[3,"t","k",""]]]`), ErrSpan, contract.ErrSpan},
		"no entries":          {withSum(`[1,1,1,0,[]]`), ErrSpan, contract.ErrSpan},
		"batch id 0":          {withSum(`[1,0,1,1,[[3,"t","k",""]]]`), ErrSpan, contract.ErrSpan},
		"seq 0":               {withSum(`[1,1,0,0,[[3,"t","k",""]]]`), ErrSpan, contract.ErrSpan},
		"op 0":                {withSum(`[1,1,1,1,[[0,"t","k",""]]]`), ErrMalformed, contract.ErrUnknownOp},
		"op 8":                {withSum(`[1,1,1,1,[[8,"t","k",""]]]`), ErrMalformed, contract.ErrUnknownOp},
		"entry of 3":          {withSum(`[1,1,1,1,[[3,"t","k"]]]`), ErrMalformed, contract.ErrMalformed},
		"checksum leading 0":  {s[:lastComma+1] + "0" + s[lastComma+1:], ErrMalformed, contract.ErrMalformed},
		"tenant not a string": {withSum(`[1,1,1,1,[[3,1,"k",""]]]`), ErrMalformed, contract.ErrMalformed},
		"reserved tenant":     {withSum(`[1,1,1,1,[[3,"_t","k",""]]]`), ErrMalformed, contract.ErrTenant},
		"bad base64":          {withSum(`[1,1,1,1,[[3,"t","k","!!!!"]]]`), ErrMalformed, contract.ErrMalformed},
		"unpadded base64":     {withSum(`[1,1,1,1,[[3,"t","k","eA"]]]`), ErrMalformed, contract.ErrMalformed},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeBatch([]byte(tc.rec))
			require.ErrorIs(t, err, tc.want, "%s → %v", tc.rec, err)
			require.ErrorIs(t, err, tc.cwe, "%s → %v", tc.rec, err)
		})
	}
}

// What upstream's decoder accepts besides its own form is read as upstream
// reads it: the same batch.
func TestBatchRecordAcceptsWhatUpstreamAccepts(t *testing.T) {
	good, err := EncodeBatch(sampleBatch())
	require.NoError(t, err)
	s := string(good)
	for name, rec := range map[string]string{
		"whitespace":       strings.ReplaceAll(s, ",", ", "),
		"trailing garbage": s + "x",
		"leading BOM":      "\xef\xbb\xbf" + s,
		"escaped ASCII":    strings.Replace(s, `"t","k"`, `"t","\u006b"`, 1),
		"uppercase escape": strings.Replace(s, `\u00fc`, `\u00FC`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := DecodeBatch([]byte(rec))
			require.NoError(t, err, "%q", rec)
			require.Equal(t, sampleBatch(), got)
		})
	}
	// LEASE_RENEW passes the codec, as upstream's; the applier refuses it.
	b, err := DecodeBatch([]byte(withSum(`[1,1,1,1,[[4,"t","k",""]]]`)))
	require.NoError(t, err)
	require.ErrorIs(t, state.New().Apply(b), state.ErrUnknownOp)
}

// The writer refuses what would not come back unchanged, what upstream's
// decoder refuses and what no applier accepts, before anything is sent.
func TestEncodeRefuses(t *testing.T) {
	for name, tc := range map[string]struct {
		e    state.Entry
		want error
	}{
		"invalid UTF-8 key":    {state.Remove("t", "\xff"), ErrMalformed},
		"invalid UTF-8 tenant": {state.Remove("\xff", "k"), ErrMalformed},
		"reserved tenant":      {state.Remove("_t", "k"), contract.ErrTenant},
		"control in tenant":    {state.Remove("t\x01", "k"), contract.ErrTenant},
		"LEASE_RENEW":          {state.Entry{Op: 4, Tenant: "t", Key: "k"}, state.ErrUnknownOp},
		"op 9":                 {state.Entry{Op: 9, Tenant: "t", Key: "k"}, state.ErrUnknownOp},
		"key too long":         {state.Remove("t", strings.Repeat("k", batchlog.MaxObjectKeySize+1)), contract.ErrTooLarge},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := EncodeBatch(state.Batch{ID: 1, FirstSeq: 1, LastSeq: 1, Entries: []state.Entry{tc.e}})
			require.ErrorIs(t, err, tc.want)
			_, err = entryBytes(tc.e)
			require.ErrorIs(t, err, tc.want, "the group committer refuses it alone")
		})
	}
	_, err := EncodeBatch(state.Batch{ID: 1, FirstSeq: 1, LastSeq: 2, Entries: []state.Entry{state.Remove("t", "k")}})
	require.ErrorIs(t, err, ErrSpan)
}

// The durable prefix is upstream's: written with members sorted, read as
// upstream reads it, then held to the reader's invariants.
func TestDurablePrefixCodec(t *testing.T) {
	for _, p := range []DurablePrefix{{}, {BatchID: 1, LastSeq: 1}, {BatchID: 5, LastSeq: 900}, {BatchID: 1<<64 - 1, LastSeq: 1<<64 - 1}} {
		got, err := DecodeDurablePrefix(p.Encode())
		require.NoError(t, err)
		require.Equal(t, p, got)
	}
	require.Equal(t, `{"batch_id":3,"last_seq":9,"schema_version":1}`, string(DurablePrefix{BatchID: 3, LastSeq: 9}.Encode()))
	for _, raw := range []string{
		`{"schema_version":1,"batch_id":3,"last_seq":9}`,
		`{ "batch_id" : 3, "last_seq" : 9, "schema_version" : 1 }`,
		`{"batch_id":3,"last_seq":9,"schema_version":1,"x":1}`,
		`{"batch_id":3,"last_seq":2,"last_seq":9,"schema_version":1}`,
		`{"batch_id":3.0,"last_seq":9,"schema_version":1}`,
	} {
		got, err := DecodeDurablePrefix([]byte(raw))
		require.NoError(t, err, raw)
		require.Equal(t, DurablePrefix{BatchID: 3, LastSeq: 9}, got, raw)
	}
	for raw, want := range map[string]error{
		`{"batch_id":0,"last_seq":4,"schema_version":1}`:   ErrMalformed,
		`{"batch_id":4,"last_seq":0,"schema_version":1}`:   ErrMalformed,
		`{"batch_id":4,"last_seq":3,"schema_version":1}`:   ErrMalformed,
		`{"batch_id":1,"last_seq":1,"schema_version":2}`:   ErrVersion,
		`{"batch_id":1,"schema_version":1}`:                ErrMalformed,
		`{"batch_id":"1","last_seq":1,"schema_version":1}`: ErrMalformed,
		`{"batch_id":-1,"last_seq":1,"schema_version":1}`:  ErrMalformed,
		`[1,1,1]`: ErrMalformed,
		``:        ErrMalformed,
	} {
		_, err := DecodeDurablePrefix([]byte(raw))
		require.ErrorIs(t, err, want, raw)
	}
}

// The producer view is upstream's: the decimal of a positive int64, read
// back only in exactly that form.
func TestProducerViewCodec(t *testing.T) {
	v, err := DecodeProducerView([]byte("42"))
	require.NoError(t, err)
	require.Equal(t, uint64(42), v)
	require.Equal(t, "42", string(EncodeProducerView(42)))
	require.Equal(t, "9223372036854775807", string(EncodeProducerView(MaxProducerView)))
	require.Nil(t, EncodeProducerView(0))
	require.Nil(t, EncodeProducerView(MaxProducerView+1))
	for _, raw := range []string{"0", "042", "+1", "-1", "1.0", " 1", "1\n", "", "x", "9223372036854775808", "18446744073709551615"} {
		_, err := DecodeProducerView([]byte(raw))
		require.ErrorIs(t, err, ErrMalformed, "%q", raw)
		require.ErrorIs(t, err, contract.ErrMalformed, "%q", raw)
	}
}

// The floor goes through contract's codec, with this package's kinds.
func TestFloorCodec(t *testing.T) {
	f, err := DecodeFloor(Floor{BatchID: 12}.Encode())
	require.NoError(t, err)
	require.Equal(t, uint64(12), f.BatchID)
	_, err = DecodeFloor([]byte(`{"schema_version":1,"batch_id":012}`))
	require.ErrorIs(t, err, ErrMalformed)
	require.ErrorIs(t, err, contract.ErrMalformed)
	_, err = DecodeFloor([]byte(`{"schema_version":2,"batch_id":12}`))
	require.ErrorIs(t, err, ErrVersion)
}
