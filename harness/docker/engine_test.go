package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/client"
	"github.com/stretchr/testify/require"
	"github.com/testcontainers/testcontainers-go"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/proc"
)

func needDocker(t *testing.T) {
	t.Helper()
	if err := Available(context.Background()); err != nil {
		t.Skipf("docker runtime: %v", err)
	}
}

func sha(t *testing.T, path string) string {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	h := sha256.New()
	_, err = io.Copy(h, f)
	require.NoError(t, err)
	return hex.EncodeToString(h.Sum(nil))
}

// leftovers lists containers and networks labelled with run.
func leftovers(t *testing.T, run string) []string {
	p, err := testcontainers.NewDockerProvider()
	require.NoError(t, err)
	defer p.Close()
	ctx := context.Background()
	f := client.Filters{}.Add("label", LabelRun+"="+run)
	cs, err := p.Client().ContainerList(ctx, client.ContainerListOptions{All: true, Filters: f})
	require.NoError(t, err)
	ns, err := p.Client().NetworkList(ctx, client.NetworkListOptions{Filters: f})
	require.NoError(t, err)
	var out []string
	for _, c := range cs.Items {
		out = append(out, "container "+strings.Join(c.Names, ","))
	}
	for _, n := range ns.Items {
		out = append(out, "network "+n.Name)
	}
	return out
}

// TestEngineRunsEtcdAsAContainer: an etcd container at its own address on
// the run's network, reached from the host; killed by its PID and started
// again at the same address; frozen and thawed; cut off the network and put
// back; and nothing of the run is left after Close.
func TestEngineRunsEtcdAsAContainer(t *testing.T) {
	needDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	c, err := bin.NewCache("../..", nil)
	require.NoError(t, err)
	etcd, err := c.Path(ctx, "etcd")
	require.NoError(t, err)
	ref := ImageRef("etcd", etcd.Version)
	_, _, err = EnsureImage(ctx, ref, etcd.Path, sha(t, etcd.Path), nil)
	require.NoError(t, err)
	built, _, err := EnsureImage(ctx, ref, etcd.Path, sha(t, etcd.Path), nil)
	require.NoError(t, err)
	require.False(t, built, "the second time the image is reused")

	dir := t.TempDir()
	run := fmt.Sprintf("oplogha-test-%d", time.Now().UnixNano())
	eng, err := New(ctx, Options{RunID: run, Mounts: []string{dir}, Images: map[string]Image{etcd.Path: {Ref: ref}}})
	require.NoError(t, err)
	group := proc.NewGroup()
	group.Launcher = eng
	closed := false
	t.Cleanup(func() {
		if !closed {
			_ = group.Close(5 * time.Second)
		}
	})
	host := group.Host("etcd-0")
	require.NotEqual(t, "127.0.0.1", host)
	url := "http://" + host + ":2379"
	spec := proc.Spec{Name: "etcd-0", Path: etcd.Path, Dir: dir, Log: filepath.Join(dir, "etcd-0.log"),
		Args: []string{"--name", "etcd-0", "--data-dir", filepath.Join(dir, "data"), "--listen-client-urls", url, "--advertise-client-urls", url,
			"--listen-peer-urls", "http://" + host + ":2380", "--initial-advertise-peer-urls", "http://" + host + ":2380",
			"--initial-cluster", "etcd-0=http://" + host + ":2380"}}
	p, err := group.Start(spec)
	require.NoError(t, err)
	require.Positive(t, p.PID)
	up := func(want bool) {
		t.Helper()
		hc := http.Client{Timeout: time.Second}
		deadline := time.Now().Add(20 * time.Second)
		for {
			resp, err := hc.Get(url + "/health")
			ok := err == nil && resp.StatusCode == 200
			if resp != nil {
				resp.Body.Close()
			}
			if ok == want {
				return
			}
			require.True(t, time.Now().Before(deadline), "etcd up=%v never came (last: %v)", want, err)
			time.Sleep(100 * time.Millisecond)
		}
	}
	up(true)

	require.NoError(t, p.Pause())
	up(false)
	require.NoError(t, p.Resume())
	up(true)

	require.NoError(t, eng.Disconnect(ctx, "etcd-0"))
	up(false)
	require.NoError(t, eng.Reconnect(ctx, "etcd-0"))
	up(true)

	require.NoError(t, p.Kill())
	require.False(t, p.Running())
	p2, err := group.Start(spec)
	require.NoError(t, err)
	require.NotEqual(t, p.PID, p2.PID)
	require.Equal(t, host, group.Host("etcd-0"), "a restarted node keeps its address")
	up(true)

	logData, err := os.ReadFile(spec.Log)
	require.NoError(t, err)
	require.Contains(t, string(logData), "ready to serve client requests", "the container's output reaches the log file")

	require.NotEmpty(t, leftovers(t, run))
	require.NoError(t, group.Close(5*time.Second))
	closed = true
	require.Empty(t, leftovers(t, run), "Close leaves no container or network of the run")
}
