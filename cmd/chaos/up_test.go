package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/cluster"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/harness/proc"
)

// TestUpPrintsAVerifyLineThatPasses boots a dev cluster with a snapshot
// store, writes to it until a snapshot is published, and runs the
// `oplogctl verify` line chaos up printed, as a person would paste it: it
// must pass and open the latest snapshot from the store. The store's secret
// stays out of what was printed.
func TestUpPrintsAVerifyLineThatPasses(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a cluster")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	cache, err := bin.NewCache("../..", nil)
	require.NoError(t, err)
	dir := t.TempDir()
	bins, err := cluster.PrepareBinaries(ctx, cache, dir)
	require.NoError(t, err)
	oplogctl := filepath.Join(dir, "bin", "oplogctl")
	_, err = cache.BuildProject(ctx, "./cmd/oplogctl", oplogctl)
	require.NoError(t, err)

	g := proc.NewGroup()
	defer g.Close(10 * time.Second)
	var out bytes.Buffer
	c, err := upDevCluster(ctx, g, bins, upOptions{etcd: 1, masters: 2, s3: "versitygw"}, filepath.Join(dir, "up"), &out)
	require.NoError(t, err, out.String())
	printed := out.String()
	require.NotContains(t, printed, c.S3.SecretKey)
	_, line, ok := strings.Cut(printed, "check the namespace:\n")
	require.True(t, ok, printed)
	line = strings.TrimSpace(line)
	require.Contains(t, line, "--s3-endpoint")

	ks := keyspace.Must(devClusterID)
	env := cluster.NewEnv(c, ks, 1)
	_, url, err := env.PrimaryURL(ctx)
	require.NoError(t, err)
	api := client.New(10 * time.Second)
	res := api.Mount(ctx, url, client.Segment{Endpoint: "10.0.0.1:7000", Name: "seg", Capacity: 1 << 30, Kind: "memory"})
	require.Equal(t, history.OK, res.Outcome, "mount: %s %s", res.Code, res.Error)
	etcdCli, err := c.Etcd.Client(nil)
	require.NoError(t, err)
	defer etcdCli.Close()
	for i := 0; ; i++ {
		res := api.Put(ctx, url, client.PutRequest{Tenant: "t", Key: fmt.Sprintf("k%d", i), ClientID: "0-1", Size: 4096})
		require.Equal(t, history.OK, res.Outcome, "put: %s %s", res.Code, res.Error)
		got, err := etcdCli.Get(ctx, ks.SnapshotLatest())
		require.NoError(t, err)
		if len(got.Kvs) > 0 {
			break
		}
		require.NoError(t, ctx.Err(), "no snapshot published")
		time.Sleep(100 * time.Millisecond)
	}

	cmd := exec.CommandContext(ctx, "sh", "-c", line)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(oplogctl)+string(os.PathListSeparator)+os.Getenv("PATH"))
	verified, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s\n%s", line, verified)
	t.Logf("chaos up printed:\n%s\nthe verify line printed:\n%s", printed, verified)
	require.Contains(t, string(verified), "ok: no violation")
	require.Regexp(t, `latest pointer: \S+ at batch \d+ seq \d+, opened from .* and verified`, string(verified))
}

func TestUpRefusesAnUnknownStore(t *testing.T) {
	err := cmdUp(context.Background(), []string{"--s3", "minio"})
	require.ErrorContains(t, err, `--s3 "minio"`)
}
