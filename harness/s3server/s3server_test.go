package s3server_test

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/oplogha/oplogha/impl/contract/batchsnap"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/s3server"
	"github.com/oplogha/oplogha/harness/s3server/s3servertest"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
	"github.com/oplogha/oplogha/impl/objstore/s3"
	"github.com/oplogha/oplogha/tests/s3store"
)

func payload(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func startServer(t *testing.T, kind string) (*s3server.Server, *s3.Store, objstore.Trust) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	srv := s3servertest.Start(t, kind)
	st, trust, err := s3store.Open(ctx, srv, "snapshots", 5<<20, "probe/checksum")
	require.NoError(t, err)
	return srv, st, trust
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func TestVersityVerifiesByChecksumSingleAndMultipart(t *testing.T) {
	srv, st, trust := startServer(t, s3server.Versity)
	require.True(t, trust.ServerValidatesChecksums, "versitygw refuses a wrong checksum")
	for name, size := range map[string]int{"single": 64 << 10, "multipart": 12<<20 + 123} {
		t.Run(name, func(t *testing.T) {
			data := payload(size, uint64(size))
			crc := batchsnap.CRC32C(data)
			key := "c1/snap-" + name + "/objects/0.bin"
			res, err := objstore.VerifiedPut(ctx(t), st, trust, key, bytes.NewReader(data), int64(len(data)), crc)
			require.NoError(t, err)
			require.Equal(t, objstore.ProofChecksum, res.Proof, "versitygw returns the full-object checksum: no readback")
			require.Equal(t, crc, *res.Info.CRC32C)

			// Another object at the key fails the put: a candidate never
			// overwrites. The same bytes again (a retried request whose
			// first reply was lost) are the same write.
			other := payload(size, uint64(size)+1)
			err = st.PutIfAbsent(ctx(t), key, bytes.NewReader(other), int64(len(other)), batchsnap.CRC32C(other))
			require.ErrorIs(t, err, objstore.ErrExists)
			require.NoError(t, st.PutIfAbsent(ctx(t), key, bytes.NewReader(data), int64(len(data)), crc))
			got, n, err := objstore.ReadbackCRC(ctx(t), st, key)
			require.NoError(t, err)
			require.Equal(t, int64(len(data)), n)
			require.Equal(t, crc, got)
		})
	}
	t.Run("wrong checksum is refused and nothing becomes readable", func(t *testing.T) {
		data := payload(4096, 9)
		key := "c1/bad/segments.bin"
		_, err := objstore.VerifiedPut(ctx(t), st, trust, key, bytes.NewReader(data), int64(len(data)), batchsnap.CRC32C(data)^1)
		require.ErrorIs(t, err, objstore.ErrCorrupt)
		_, err = st.Head(ctx(t), key)
		require.ErrorIs(t, err, objstore.ErrNotFound)
	})
	t.Run("a byte flipped behind the server is caught on read", func(t *testing.T) {
		data := payload(8192, 10)
		crc := batchsnap.CRC32C(data)
		key := "c1/flip/objects/0.bin"
		_, err := objstore.VerifiedPut(ctx(t), st, trust, key, bytes.NewReader(data), int64(len(data)), crc)
		require.NoError(t, err)
		path := filepath.Join(srv.Dir, "root", "snapshots", filepath.FromSlash(key))
		raw, err := os.ReadFile(path)
		require.NoError(t, err)
		raw[100] ^= 0xff
		require.NoError(t, os.WriteFile(path, raw, 0o644))
		got, _, err := objstore.ReadbackCRC(ctx(t), st, key)
		require.NoError(t, err)
		require.NotEqual(t, crc, got, "the stored bytes no longer hash to the manifest's checksum")
	})
	t.Run("list and delete", func(t *testing.T) {
		infos, err := st.List(ctx(t), "c1/")
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(infos), 3)
		var keys []string
		for _, in := range infos {
			keys = append(keys, in.Key)
		}
		require.NoError(t, st.Delete(ctx(t), append(keys, "c1/never-there")))
		infos, err = st.List(ctx(t), "c1/")
		require.NoError(t, err)
		require.Empty(t, infos)
	})
}

func TestChecksumlessServerFallsBackToReadback(t *testing.T) {
	_, st, trust := startServer(t, s3server.FakeS3)
	require.False(t, trust.ServerValidatesChecksums, "gofakes3 stores a wrong checksum and echoes it on HEAD")
	data := payload(100_000, 3)
	crc := batchsnap.CRC32C(data)
	res, err := objstore.VerifiedPut(ctx(t), st, trust, "c1/s/segments.bin", bytes.NewReader(data), int64(len(data)), crc)
	require.NoError(t, err)
	require.Equal(t, objstore.ProofReadback, res.Proof, "an unvalidated echo is no proof: complete readback is mandatory")
	// Trusting the echo would have "verified" bytes that do not match.
	other := payload(100_000, 4)
	require.NoError(t, st.PutIfAbsent(ctx(t), "c1/s/lie.bin", bytes.NewReader(other), int64(len(other)), crc))
	_, err = objstore.VerifiedPut(ctx(t), st, trust, "c1/s/lie2.bin", bytes.NewReader(other), int64(len(other)), crc)
	require.ErrorIs(t, err, objstore.ErrCorrupt, "readback sees the bytes are not the ones the checksum names")
}

func TestLocalDirReadbackAndCreateOnly(t *testing.T) {
	st, err := localdir.New(t.TempDir())
	require.NoError(t, err)
	trust, err := objstore.Probe(ctx(t), st, "probe")
	require.NoError(t, err)
	require.False(t, trust.ServerValidatesChecksums)
	data := payload(50_000, 4)
	crc := batchsnap.CRC32C(data)
	res, err := objstore.VerifiedPut(ctx(t), st, trust, "c1/x/objects/0.bin", bytes.NewReader(data), int64(len(data)), crc)
	require.NoError(t, err)
	require.Equal(t, objstore.ProofReadback, res.Proof)
	require.ErrorIs(t, st.PutIfAbsent(ctx(t), "c1/x/objects/0.bin", bytes.NewReader(data), int64(len(data)), crc), objstore.ErrExists)
	_, err = objstore.VerifiedPut(ctx(t), st, trust, "c1/y/a.bin", bytes.NewReader(data), int64(len(data)), crc^1)
	require.ErrorIs(t, err, objstore.ErrCorrupt, "readback catches a wrong expected checksum")
	_, err = st.Head(ctx(t), "c1/nope")
	require.ErrorIs(t, err, objstore.ErrNotFound)
	require.Error(t, st.PutIfAbsent(ctx(t), "../escape", bytes.NewReader(data), 1, 0))
}
