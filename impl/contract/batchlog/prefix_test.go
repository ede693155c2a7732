package batchlog

import (
	"bytes"
	"errors"
	"testing"

	"github.com/oplogha/oplogha/impl/contract"
)

func TestPrefixVectors(t *testing.T) {
	vs := readVectors[prefixVector](t, "prefixes.jsonl")
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			p := DurablePrefix{BatchID: v.Input.BatchID, LastSeq: v.Input.LastSeq}
			want := mustB64(t, v.ValueB64)
			if got := EncodeDurablePrefix(p); !bytes.Equal(got, want) {
				t.Fatalf("EncodeDurablePrefix = %s, want %s", got, want)
			}
			got, err := DecodeDurablePrefix(want)
			if err != nil || got != p {
				t.Fatalf("DecodeDurablePrefix = %+v, %v", got, err)
			}
			if key := BuildDurablePrefixKey("vectors"); key != v.EtcdKey {
				t.Fatalf("key %q, want %q", key, v.EtcdKey)
			}
		})
	}
	t.Logf("%d prefixes.jsonl vectors", len(vs))
}

// TestBadPrefixVectors: each value is judged as upstream judged it:
// accepted with its fields, or refused with upstream's reason.
func TestBadPrefixVectors(t *testing.T) {
	vs := readVectors[prefixVector](t, "bad-prefixes.jsonl")
	for _, v := range vs {
		t.Run(v.Name, func(t *testing.T) {
			got, err := DecodeDurablePrefix(mustB64(t, v.ValueB64))
			if v.Accepted {
				want := DurablePrefix{BatchID: v.BatchID, LastSeq: v.LastSeq}
				if err != nil || got != want {
					t.Fatalf("DecodeDurablePrefix = %+v, %v; upstream accepts %+v", got, err, want)
				}
				return
			}
			var de *contract.Error
			if !errors.As(err, &de) || de.Reason != v.Error {
				t.Fatalf("DecodeDurablePrefix error %v, want reason %q", err, v.Error)
			}
			want := contract.ErrMalformed
			if v.Error == "unsupported durable prefix schema_version" {
				want = contract.ErrVersion
			}
			if !errors.Is(err, want) {
				t.Fatalf("error %v is not %v", err, want)
			}
		})
	}
	t.Logf("%d bad-prefixes.jsonl vectors", len(vs))
}
