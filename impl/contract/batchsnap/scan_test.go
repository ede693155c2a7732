package batchsnap

import (
	"slices"
	"testing"

	"github.com/oplogha/oplogha/impl/contract/structpack"
)

// scanChunk collects what ScanObjectChunk visits into a chunk (entries
// cloned: the scan reuses one), with strings read through strs.
func scanChunk(data []byte, index, count uint64, strs *structpack.Strings) (ObjectChunk, error) {
	c := ObjectChunk{ChunkIndex: index, Objects: []ObjectEntry{}}
	err := ScanObjectChunk(data, index, count, strs, func(e *ObjectEntry) error {
		x := *e
		x.TenantID, x.Key, x.Metadata.GroupID = string([]byte(e.TenantID)), string([]byte(e.Key)), string([]byte(e.Metadata.GroupID))
		x.Metadata.Replicas = nil // as a fresh decode leaves an object without replicas
		if len(e.Metadata.Replicas) > 0 {
			x.Metadata.Replicas = slices.Clone(e.Metadata.Replicas)
		}
		for i := range x.Metadata.Replicas {
			r := &x.Metadata.Replicas[i]
			r.Buffer.Protocol, r.Buffer.TransportEndpoint = string([]byte(r.Buffer.Protocol)), string([]byte(r.Buffer.TransportEndpoint))
			r.Disk.FilePath, r.DistributedFS.FilePath = string([]byte(r.Disk.FilePath)), string([]byte(r.DistributedFS.FilePath))
			r.LocalDisk.TransportEndpoint = string([]byte(r.LocalDisk.TransportEndpoint))
		}
		c.Objects = append(c.Objects, x)
		return nil
	})
	return c, err
}

// sameAsDecode holds ScanObjectChunk to DecodeObjectChunk on data: the
// same objects, or the same refusal.
func sameAsDecode(t *testing.T, name string, data []byte, index, count uint64) {
	t.Helper()
	want, werr := DecodeObjectChunk(data, index, count)
	for _, strs := range []*structpack.Strings{nil, structpack.Views()} {
		got, err := scanChunk(data, index, count, strs)
		switch {
		case (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()):
			t.Errorf("%s: scan says %v, decode %v", name, err, werr)
		case err == nil && !equalJSON(got, want):
			t.Errorf("%s: what the scan visits differs from what the decoder builds", name)
		}
	}
}

// Every chunk vector, canonical and bad, in both struct_pack variants, and
// with an index or count that does not match: the scan is the decoder.
func TestScanObjectChunkIsDecodeObjectChunk(t *testing.T) {
	vs := append(read[binaryVector](t, "object-chunks.jsonl"), read[binaryVector](t, "object-chunks-large.jsonl")...)
	for _, v := range vs {
		for _, data := range [][]byte{vb64(t, v.BytesB64), vb64(t, v.BytesB64TypeLiteral)} {
			sameAsDecode(t, v.Name, data, v.ChunkIndex, v.ObjectCount)
			sameAsDecode(t, v.Name+" (wrong index)", data, v.ChunkIndex+1, v.ObjectCount)
			sameAsDecode(t, v.Name+" (wrong count)", data, v.ChunkIndex, v.ObjectCount+1)
		}
	}
	type row struct {
		Name                string
		Artifact            string
		BytesB64            string `json:"bytes_b64"`
		BytesB64TypeLiteral string `json:"bytes_b64_type_literal"`
		ExpectIndex         uint64 `json:"expected_chunk_index"`
		ExpectCount         uint64 `json:"expected_object_count"`
	}
	n := 0
	for _, v := range read[row](t, "bad-chunks.jsonl") {
		if v.Artifact != "object_chunk" {
			continue
		}
		n++
		for _, data := range [][]byte{vb64(t, v.BytesB64), vb64(t, v.BytesB64TypeLiteral)} {
			sameAsDecode(t, v.Name, data, v.ExpectIndex, v.ExpectCount)
		}
	}
	if n == 0 {
		t.Fatal("no bad object chunk in the vectors")
	}
}

// FuzzScanObjectChunk: on any input the scan and the decoder agree.
func FuzzScanObjectChunk(f *testing.F) {
	for _, v := range read[binaryVector](f, "object-chunks.jsonl") {
		f.Add(vb64(f, v.BytesB64), v.ChunkIndex, v.ObjectCount)
		f.Add(vb64(f, v.BytesB64TypeLiteral), v.ChunkIndex, v.ObjectCount)
	}
	f.Fuzz(func(t *testing.T, data []byte, index, count uint64) {
		sameAsDecode(t, "fuzz", data, index, count)
	})
}
