package legacysnap_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	"github.com/oplogha/oplogha/impl/contract/legacysnap"
)

// vectors are the golden legacy snapshots upstream's own code wrote
// (../testdata/upstream/legacy/README.md), each with the expected.json of
// what upstream's decoder recovered from it.
const vectors = "../testdata/upstream/legacy"

// fixtures are the project's own legacy snapshots (fixtures/legacy).
const fixtures = "../../../fixtures/legacy"

var vectorNames = []string{"empty", "small", "many", "draining"}

// dir reads a directory as an object store root.
type dir string

func (d dir) Get(_ context.Context, key string) (io.ReadCloser, error) {
	f, err := os.Open(filepath.Join(string(d), filepath.FromSlash(key)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s", legacysnap.ErrNotFound, d)
	}
	return f, err
}

func source(root string) legacysnap.Source { return legacysnap.Source{Store: dir(root)} }

// memStore serves a fixed set of objects by exact key.
type memStore map[string][]byte

func (m memStore) Get(_ context.Context, key string) (io.ReadCloser, error) {
	d, ok := m[key]
	if !ok {
		return nil, fmt.Errorf("%w in mem", legacysnap.ErrNotFound)
	}
	return io.NopCloser(bytes.NewReader(d)), nil
}

// msgpackOf encodes v with msgpack (tests craft documents with it).
func msgpackOf(t testing.TB, v any) []byte {
	data, err := msgpack.Marshal(v)
	require.NoError(t, err)
	return data
}

// frameOf is v in msgpack, in one zstd frame with its content size.
func frameOf(t testing.TB, v any) []byte {
	z, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithSingleSegment(true))
	require.NoError(t, err)
	defer z.Close()
	return z.EncodeAll(msgpackOf(t, v), nil)
}

var typedErrors = []error{legacysnap.ErrNotFound, legacysnap.ErrID, legacysnap.ErrDescriptor, legacysnap.ErrManifest, legacysnap.ErrTruncated,
	legacysnap.ErrMalformed, legacysnap.ErrContent}

func typed(err error) bool {
	for _, e := range typedErrors {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}
