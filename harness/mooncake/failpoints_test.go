package mooncake

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/masters"
	"github.com/oplogha/oplogha/harness/proc"
)

// upstreamSide plays the master's side of upstream's failpoint handshake,
// step for step as its TestFailPoint::Wait does: claim the arm file by
// renaming it to .claimed.<pid>, publish .hit (the pid) through a
// temporary file, wait for .release, then remove release, hit and claim.
// It exits 0 once released, 3 if never armed within 20 s.
const upstreamSide = `
d="$MOONCAKE_TEST_FAILPOINT_DIR"; n="$1"
i=0
until mv "$d/$n.arm" "$d/$n.claimed.$$" 2>/dev/null; do
  i=$((i+1)); [ $i -gt 2000 ] && exit 3; sleep 0.01
done
rm -f "$d/$n.release"
echo $$ > "$d/$n.hit.tmp.$$" && mv "$d/$n.hit.tmp.$$" "$d/$n.hit"
until [ -e "$d/$n.release" ]; do sleep 0.01; done
rm -f "$d/$n.release" "$d/$n.hit" "$d/$n.claimed.$$"
exit 0
`

// startNode prepares node master-0 for d and starts the handshake script
// as its process, waiting at failpoint own.
func startNode(t *testing.T, d *Driver, group *proc.Group, own string) (*masters.Node, *proc.Process) {
	t.Helper()
	dir := t.TempDir()
	n := &masters.Node{Name: "master-0", FailpointAddr: "127.0.0.1:1", ConfigPath: filepath.Join(dir, "master-0.yaml"),
		Log: filepath.Join(dir, "master-0.log")}
	require.NoError(t, d.Prepare(n, masters.Settings{ClusterID: "c", Listen: "127.0.0.1:2", EtcdEndpoints: []string{"http://127.0.0.1:3"}}))
	_, env := d.Command(n)
	p, err := group.Start(proc.Spec{Name: n.Name, Path: "/bin/sh", Args: []string{"-c", upstreamSide, "sh", own}, Env: env, Log: n.Log})
	require.NoError(t, err)
	return n, p
}

func newTestDriver(t *testing.T) (*Driver, *proc.Group) {
	group := proc.NewGroup()
	t.Cleanup(func() { _ = group.Close(2 * time.Second) })
	return NewDriver("/bin/true", group, nil), group
}

func waitHits(t *testing.T, d *Driver, n *masters.Node, name string) {
	t.Helper()
	require.Eventually(t, func() bool {
		h, err := d.FailpointHits(context.Background(), n, name)
		return err == nil && h == 1
	}, 10*time.Second, 10*time.Millisecond)
}

func TestHoldIsArmAndHealIsRelease(t *testing.T) {
	d, group := newTestDriver(t)
	ctx := context.Background()
	n, p := startNode(t, d, group, "batch_before_txn")
	hits, err := d.FailpointHits(ctx, n, "primaryBeforeAppend")
	require.NoError(t, err)
	assert.Zero(t, hits, "not armed, not hit")
	require.NoError(t, d.Failpoint(ctx, n, "primaryBeforeAppend", `1*return("hold")`))
	waitHits(t, d, n, "primaryBeforeAppend")
	select {
	case <-p.Done():
		t.Fatal("the node left the failpoint before its release")
	case <-time.After(100 * time.Millisecond):
	}
	require.NoError(t, d.Failpoint(ctx, n, "primaryBeforeAppend", ""))
	select {
	case <-p.Done():
		require.NoError(t, p.ExitErr(), "released, the node goes on")
	case <-time.After(10 * time.Second):
		t.Fatal("the release did not let the node go on")
	}
	hits, err = d.FailpointHits(ctx, n, "primaryBeforeAppend")
	require.NoError(t, err)
	assert.Equal(t, 1, hits, "a hit stays counted after its release")
}

func TestPanicIsHoldThenSIGKILL(t *testing.T) {
	d, group := newTestDriver(t)
	ctx := context.Background()
	n, p := startNode(t, d, group, "batch_txn_succeeded_before_callback")
	require.NoError(t, d.Failpoint(ctx, n, "primaryAfterAppend", "1*panic"))
	select {
	case <-p.Done():
		require.Error(t, p.ExitErr())
		assert.Contains(t, p.ExitErr().Error(), "killed")
	case <-time.After(10 * time.Second):
		t.Fatal("the node reached the point and was not killed")
	}
	hits, err := d.FailpointHits(ctx, n, "primaryAfterAppend")
	require.NoError(t, err)
	assert.Equal(t, 1, hits)
}

func TestRearmForgetsAKilledHolder(t *testing.T) {
	d, group := newTestDriver(t)
	ctx := context.Background()
	n, p := startNode(t, d, group, "batch_before_txn")
	require.NoError(t, d.Failpoint(ctx, n, "primaryBeforeAppend", `1*return("hold")`))
	waitHits(t, d, n, "primaryBeforeAppend")
	require.NoError(t, p.Kill())
	<-p.Done()
	require.NoError(t, d.Failpoint(ctx, n, "primaryBeforeAppend", `1*return("hold")`))
	hits, err := d.FailpointHits(ctx, n, "primaryBeforeAppend")
	require.NoError(t, err)
	assert.Zero(t, hits, "the killed process's hit file is not the new arm's hit")
	leftovers, _ := filepath.Glob(filepath.Join(d.nodes["master-0"].fpDir, "*claimed*"))
	assert.Empty(t, leftovers)
	_, err = os.Stat(filepath.Join(d.nodes["master-0"].fpDir, "batch_before_txn.arm"))
	assert.NoError(t, err)
}

func TestTermsUpstreamCannotExpressAreRefused(t *testing.T) {
	d, group := newTestDriver(t)
	ctx := context.Background()
	n, _ := startNode(t, d, group, "batch_before_txn")
	for _, term := range []string{"sleep(100)", "return(true)", "2*panic", `3*return("hold")`, "1*off->1*panic"} {
		assert.ErrorIs(t, d.Failpoint(ctx, n, "primaryBeforeAppend", term), ErrTerm, term)
	}
	assert.ErrorContains(t, d.Failpoint(ctx, n, "snapshotBeforeCAS", "1*panic"), "master mooncake has no failpoint snapshotBeforeCAS")
	_, err := d.StartFailpoints(n, map[string]string{"primaryBeforeAppend": "1*panic"})
	assert.ErrorIs(t, err, ErrTerm)
}

func TestCommandCarriesUpstreamFlags(t *testing.T) {
	d, _ := newTestDriver(t)
	dir := t.TempDir()
	n := &masters.Node{Name: "master-1", FailpointAddr: "127.0.0.1:9003", ConfigPath: filepath.Join(dir, "master-1.yaml")}
	require.NoError(t, d.Prepare(n, masters.Settings{ClusterID: "chaos", Listen: "127.0.0.1:50051",
		EtcdEndpoints: []string{"http://127.0.0.1:1", "http://127.0.0.1:2"}}))
	args, env := d.Command(n)
	for _, want := range []string{"--enable_ha=true", "--ha_backend_type=etcd", "--etcd_endpoints=http://127.0.0.1:1;http://127.0.0.1:2",
		"--ha_backend_connstring=http://127.0.0.1:1;http://127.0.0.1:2", "--cluster_id=chaos", "--enable_oplog=true",
		"--rpc_address=127.0.0.1", "--rpc_port=50051", "--metrics_host=127.0.0.1", "--metrics_port=9003"} {
		assert.Contains(t, args, want)
	}
	assert.Contains(t, env, "MOONCAKE_TEST_FAILPOINT_DIR="+filepath.Join(dir, "master-1.failpoints"))
	assert.Contains(t, env, "MOONCAKE_TEST_FAILPOINT_TIMEOUT_SEC=3600")
}
