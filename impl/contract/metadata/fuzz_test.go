package metadata

import (
	"testing"

	"github.com/oplogha/oplogha/impl/contract/batchlog"

	"github.com/oplogha/oplogha/impl/contract/structpack"
)

// FuzzDecodePayload: no input panics, for any of the four payload types;
// what decodes re-encodes, in both wire variants, to bytes that decode to
// the same value; DecodeMetadataFields (reused, interning) agrees with
// DecodeMetadataPayload.
func FuzzDecodePayload(f *testing.F) {
	types := []string{"MetadataPayload", "SegmentMountOp", "SegmentUpdateOp", "SegmentUnmountOp"}
	for _, v := range readVectors[payloadVector](f, "payloads.jsonl") {
		nd := mustB64(f, v.BytesB64)
		if len(nd) > 4096 {
			continue // the long-string vectors add nothing but time
		}
		for i, name := range types {
			if len(v.Type) >= len(name) && v.Type[:len(name)] == name {
				f.Add(uint8(i), nd)
				f.Add(uint8(i), mustB64(f, v.BytesB64TypeLiteral))
			}
		}
	}
	// The replay path's decoder, reused from input to input with one
	// intern table, decodes what DecodeMetadataPayload does.
	var (
		fields MetadataFields
		strs   structpack.Strings
	)
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		c := payloadCodecs[types[int(kind)%len(types)]]
		v, err := c.decode(data)
		if c.op == batchlog.OpPutEnd {
			ferr := DecodeMetadataFields(data, &fields, &strs)
			if (ferr == nil) != (err == nil) || ferr != nil && ferr.Error() != err.Error() {
				t.Fatalf("DecodeMetadataFields %v, DecodeMetadataPayload %v", ferr, err)
			}
			if err == nil && !samePayload(fields.Payload(), v) {
				t.Fatalf("DecodeMetadataFields %+v, DecodeMetadataPayload %+v", fields.Payload(), v)
			}
		}
		if err != nil {
			return
		}
		for _, enc := range []func(any) ([]byte, error){c.encode, c.encodeLit} {
			b, err := enc(v)
			if err != nil {
				t.Fatalf("decoded %+v does not encode: %v", v, err)
			}
			w, err := c.decode(b)
			if err != nil || !samePayload(v, w) {
				t.Fatalf("%+v re-encoded decodes to %+v, %v", v, w, err)
			}
		}
	})
}

// FuzzDecodeFloor: no input panics; what decodes is the exact record the
