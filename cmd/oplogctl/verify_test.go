package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

// plantOpLog writes batches 1..n (one REMOVE each), the prefix at n and
// producer view 1 through the contract's encoders.
func plantOpLog(t *testing.T, cli *clientv3.Client, ks keyspace.Keyspace, n uint64) {
	for i := uint64(1); i <= n; i++ {
		v, err := batchlog.EncodeBatch(batchlog.Batch{ID: i, FirstSeq: i, LastSeq: i, Entries: []batchlog.Entry{{Op: batchlog.OpRemove, Tenant: "t", Key: "k"}}})
		require.NoError(t, err)
		_, err = cli.Put(context.Background(), ks.Batch(i), string(v))
		require.NoError(t, err)
	}
	_, err := cli.Put(context.Background(), ks.DurablePrefix(), string(batchlog.EncodeDurablePrefix(batchlog.DurablePrefix{BatchID: n, LastSeq: n})))
	require.NoError(t, err)
	_, err = cli.Put(context.Background(), ks.ProducerView(), "1")
	require.NoError(t, err)
}

func TestVerifyNamesAPlantedBadBatch(t *testing.T) {
	ep := startResetEtcd(t, nil)
	cli, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, Logger: zap.NewNop()})
	require.NoError(t, err)
	defer cli.Close()
	ks := keyspace.Must("prod")
	plantOpLog(t, cli, ks, 5)

	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"verify", "--endpoints", ep, "--cluster-id", "prod"}, &out, &errOut)
	require.Equal(t, 0, code, "stdout:\n%s\nstderr:\n%s", out.String(), errOut.String())
	require.Contains(t, out.String(), "5 batch records (1..5); durable prefix batch 5 seq 5; producer view 1")
	require.Contains(t, out.String(), "ok: no violation")

	// A record that parses, with one key changed under its old checksum.
	v, err := batchlog.EncodeBatch(batchlog.Batch{ID: 3, FirstSeq: 3, LastSeq: 3, Entries: []batchlog.Entry{{Op: batchlog.OpRemove, Tenant: "t", Key: "k"}}})
	require.NoError(t, err)
	_, err = cli.Put(context.Background(), ks.Batch(3), strings.Replace(string(v), `"k"`, `"x"`, 1))
	require.NoError(t, err)
	out.Reset()
	code = run(context.Background(), []string{"verify", "--etcd", ep, "--cluster-id", "prod"}, &out, &errOut)
	require.Equal(t, 1, code, out.String())
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Equal(t, ks.Batch(3)+": batch record rejected: checksum mismatch: batch record checksum mismatch", lines[0])
	require.Equal(t, "FAIL: 1 violations", lines[len(lines)-1])

	out.Reset()
	code = run(context.Background(), []string{"verify", "--etcd", ep, "--cluster-id", "prod", "--json"}, &out, &errOut)
	require.Equal(t, 1, code)
	var rep struct {
		Violations []struct{ Key, Reason string }
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &rep))
	require.Len(t, rep.Violations, 1)
	require.Equal(t, ks.Batch(3), rep.Violations[0].Key)
}

func TestVerifyUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"verify"},
		{"verify", "--cluster-id", "c"},
		{"verify", "--etcd", "http://127.0.0.1:1", "--cluster-id", "bad/id"},
		{"verify", "--etcd", "http://127.0.0.1:1", "--cluster-id", "c", "--s3-bucket", "b"},
		{"verify", "--etcd", "http://127.0.0.1:1", "--cluster-id", "c", "extra"},
	} {
		var out, errOut bytes.Buffer
		require.Equal(t, 2, run(context.Background(), args, &out, &errOut), "%q: %s", args, errOut.String())
		require.Contains(t, errOut.String(), "oplogctl verify:")
	}
}
