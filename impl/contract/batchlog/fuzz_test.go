package batchlog

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/oplogha/oplogha/impl/contract/jsoncpp"
)

// Run one with, e.g.:
//
//	go test -run '^$' -fuzz FuzzDecodeBatch -fuzztime 20s ./impl/contract

func addBatchSeeds(f *testing.F) {
	for _, file := range []string{"batches.jsonl", "bad-batches.jsonl", "lenient-batches.jsonl"} {
		for _, v := range readVectors[batchVector](f, file) {
			f.Add(mustB64(f, v.ValueB64))
		}
	}
}

func deepCopyBatch(b Batch) Batch {
	c := b
	c.Entries = append([]Entry(nil), b.Entries...)
	for i := range c.Entries {
		c.Entries[i].Payload = bytes.Clone(c.Entries[i].Payload)
	}
	return c
}

// jsonRoundTrip is what a string becomes after upstream's writer and reader:
// itself when it is valid UTF-8.
func jsonRoundTrip(t *testing.T, s string) string {
	t.Helper()
	v, _, err := jsoncpp.Parse(jsoncpp.AppendString(nil, s))
	if err != nil || v.Kind != jsoncpp.String {
		t.Fatalf("written string %q does not parse back: %+v", s, err)
	}
	return v.Str
}

// FuzzDecodeBatch: no input panics; the fast path never accepts what the
// general path would not, nor decodes it differently; whatever decodes
// re-encodes (in the canonical form, which takes the fast path) to a record
// that decodes to the same batch, up to upstream's own lossy writing of
// strings that are not UTF-8.
func FuzzDecodeBatch(f *testing.F) {
	addBatchSeeds(f)
	// Blocks reused from input to input (reset now and then): a record
	// decoded into them decodes as without, and never touches the batches
	// decoded before it since the last Reset.
	blocks := NewBatchBlocks[Entry](64, 4096)
	var kept []Batch // decoded into blocks since the last Reset
	var keptCopies []Batch
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := DecodeBatch(data)
		general, gerr := decodeGeneralBatch(data)
		if fast, ok := decodeCanonicalBatch(data); ok {
			if gerr != nil || !sameBatch(fast, general) {
				t.Fatalf("fast path accepted %q as %+v; general path: %+v, %v", data, fast, general, gerr)
			}
		}
		if (err == nil) != (gerr == nil) || err != nil && err.Error() != gerr.Error() {
			t.Fatalf("DecodeBatch %v, general path %v", err, gerr)
		}
		// DecodeBatchAs (the replay path's) is DecodeBatch, with blocks or without.
		for _, bl := range []*BatchBlocks[Entry]{nil, blocks} {
			as, entries, aerr := DecodeBatchAs(data, func(e Entry) Entry { return e }, bl)
			if as.Entries != nil || (aerr == nil) != (err == nil) || aerr != nil && aerr.Error() != err.Error() {
				t.Fatalf("DecodeBatchAs %+v, %v; DecodeBatch %v", as, aerr, err)
			}
			if as.Entries = entries; err == nil && !sameBatch(as, b) {
				t.Fatalf("DecodeBatchAs %+v, DecodeBatch %+v", as, b)
			}
			if bl != nil && err == nil {
				kept = append(kept, as)
				keptCopies = append(keptCopies, deepCopyBatch(as))
			}
		}
		for i := range kept {
			if !sameBatch(kept[i], keptCopies[i]) {
				t.Fatalf("decoding %q into the blocks changed a batch decoded before: %+v, was %+v", data, kept[i], keptCopies[i])
			}
		}
		if len(blocks.Entries) > 32 || len(blocks.Payloads) > 2048 {
			blocks.Reset()
			kept, keptCopies = kept[:0], keptCopies[:0]
		}
		if err != nil {
			return
		}
		enc, err := EncodeBatch(b)
		if err != nil {
			t.Fatalf("decoded batch does not encode: %v", err)
		}
		want := b
		want.Entries = append([]Entry(nil), b.Entries...)
		for i := range want.Entries {
			want.Entries[i].Tenant = jsonRoundTrip(t, want.Entries[i].Tenant)
			want.Entries[i].Key = jsonRoundTrip(t, want.Entries[i].Key)
		}
		again, ok := decodeCanonicalBatch(enc)
		if !ok {
			t.Fatalf("re-encoded record %q misses the fast path", enc)
		}
		if !sameBatch(again, want) {
			t.Fatalf("round trip:\n got %+v\nwant %+v", again, want)
		}
		if enc2, err := EncodeBatch(again); err != nil || !bytes.Equal(enc2, enc) {
			t.Fatalf("second encoding differs: %v", err)
		}
	})
}

// FuzzCanonicalBase64: the fast path's one-pass decoder accepts exactly
// what the general path's (the standard library's strict decoder behind an
// alphabet check) accepts, decodes it to the same bytes, and leaves what it
// appends to alone.
func FuzzCanonicalBase64(f *testing.F) {
	for _, s := range []string{"", "AA==", "AB==", "AAA=", "AAB=", "AAAA", "A===", "====", "AA=A", "AA==AAAA",
		"AAAA\nAAA", "+/+/", "-_-_", "QUJD", "QUI=", "QQ=="} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) {
		want, wok := decodeCanonicalBase64(s)
		prefix := []byte("prefix")
		dst, got, ok := appendCanonicalBase64(append([]byte(nil), prefix...), s)
		if ok != wok || !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("%q: fast %q %v, general %q %v", s, got, ok, want, wok)
		}
		if !bytes.Equal(dst[:len(prefix)], prefix) || ok && !bytes.Equal(dst[len(prefix):], want) || !ok && len(dst) != len(prefix) {
			t.Fatalf("%q: dst %q", s, dst)
		}
		if cap(got) != len(got) {
			t.Fatalf("%q: decoded bytes have room to append into", s)
		}
	})
}

// FuzzJSONString: upstream's string writing, read back, is idempotent,
// lossless exactly for valid UTF-8, and always in the fast path's form.
func FuzzJSONString(f *testing.F) {
	for _, s := range []string{"", "k", "键", "\x00\x1f\x7f/\"\\", "\xff\xfe-\xc3", "\xed\xa0\x80x\xc0\x80", "\xf7\xbf\xbf\xbf", "😀"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w := jsoncpp.AppendString(nil, s)
		r := jsonRoundTrip(t, s)
		if !utf8.ValidString(r) {
			t.Fatalf("%q read back as invalid UTF-8 %q", s, r)
		}
		if utf8.ValidString(s) != (r == s) {
			t.Fatalf("%q read back as %q", s, r)
		}
		if w2 := jsoncpp.AppendString(nil, r); !bytes.Equal(w2, w) {
			t.Fatalf("%q: writes %s, its read-back writes %s", s, w, w2)
		}
		sc := canonScanner{data: w}
		if got, ok := sc.str(); !ok || got != r || sc.pos != len(w) {
			t.Fatalf("fast path reads %s as %q, %v", w, got, ok)
		}
	})
}

// FuzzDecodeDurablePrefix: no input panics; what decodes re-encodes to a
// value that decodes to the same prefix.
func FuzzDecodeDurablePrefix(f *testing.F) {
	for _, file := range []string{"prefixes.jsonl", "bad-prefixes.jsonl"} {
		for _, v := range readVectors[prefixVector](f, file) {
			f.Add(mustB64(f, v.ValueB64))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodeDurablePrefix(data)
		if err != nil {
			return
		}
		if q, err := DecodeDurablePrefix(EncodeDurablePrefix(p)); err != nil || q != p {
			t.Fatalf("%q: %+v re-encoded decodes to %+v, %v", data, p, q, err)
		}
	})
}
