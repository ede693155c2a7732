package batchlog

import "testing"

// The replay path decodes every batch record: compare the fast path (what
// an upstream-written record takes) with the general parser. All report
// MB/s of records (tests/bench's Codec group measures the same on the
// replay benchmark's records, against XXH32 alone).
func benchmarkRecord(b *testing.B) []byte {
	for _, v := range readVectors[batchVector](b, "batches.jsonl") {
		if v.Name == "hundred_entries" {
			return mustB64(b, v.ValueB64)
		}
	}
	b.Fatal("no hundred_entries vector")
	return nil
}

func BenchmarkDecodeBatch(b *testing.B) {
	data := benchmarkRecord(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := DecodeBatch(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeBatchGeneral(b *testing.B) {
	data := benchmarkRecord(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := decodeGeneralBatch(data); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeBatch(b *testing.B) {
	data := benchmarkRecord(b)
	batch, err := DecodeBatch(data)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := EncodeBatch(batch); err != nil {
			b.Fatal(err)
		}
	}
}
