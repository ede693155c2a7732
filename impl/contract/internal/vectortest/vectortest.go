// Package vectortest reads the golden vectors upstream's own code wrote
// (impl/contract/testdata/upstream, provenance in its README files) for the
// tests of the contract packages: one JSON Lines file at a time, each line
// decoded into the test's own type.
package vectortest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Dir is the directory of the upstream vectors.
func Dir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "upstream")
}

// Path is the path of a vector file relative to Dir ("batches.jsonl",
// "snapshot/descriptors.jsonl").
func Path(file string) string { return filepath.Join(Dir(), file) }

// Read decodes every line of a vector file into a T (numbers as
// json.Number where T has interface fields).
func Read[T any](t testing.TB, file string) []T {
	t.Helper()
	f, err := os.Open(Path(file))
	if err != nil {
		t.Fatalf("open vectors: %v", err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for line := 1; sc.Scan(); line++ {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.UseNumber()
		var v T
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("%s line %d: %v", file, line, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("read %s: %v", file, err)
	}
	if len(out) == 0 {
		t.Fatalf("%s has no vectors", file)
	}
	return out
}

// B64 decodes a vector's standard base64.
func B64(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("vector base64 %q: %v", s, err)
	}
	return b
}

// String is a vector string: the raw bytes of the *_b64 field when the
// vector has one (they are authoritative), else the plain field.
func String(t testing.TB, plain, b64 *string) string {
	t.Helper()
	switch {
	case b64 != nil:
		return string(B64(t, *b64))
	case plain != nil:
		return *plain
	}
	t.Fatalf("vector string has neither a value nor _b64")
	return ""
}
