package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/cluster"
	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/mooncake"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/harness/traffic"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// The write-path and failover groups run against the master kind
// OPLOGHA_BENCH_MASTER names: reference (default) or mooncake (upstream's
// mooncake_master, from MOONCAKE_MASTER), so `make bench BENCH_MASTERS=
// "reference mooncake"` puts both kinds' figures in one results table.
const benchMasterEnv = "OPLOGHA_BENCH_MASTER"

// benchKind is the kind under measurement.
type benchKind struct {
	kind masterkind.Kind
	// lease is the leader lease TTL failover stands beside: the reference
	// master's is set for the run, upstream's is its hard-coded 5 s.
	lease time.Duration
}

func benchMaster(b *testing.B) benchKind {
	b.Helper()
	k, err := masterkind.ByName(os.Getenv(benchMasterEnv))
	if err != nil {
		b.Fatalf("%s: %v", benchMasterEnv, err)
	}
	if k.Name == masterkind.MooncakeName {
		return benchKind{kind: k, lease: 5 * time.Second}
	}
	return benchKind{kind: k, lease: 2 * time.Second}
}

// name prefixes a figure's name with the kind, but for the reference
// master's, whose figures keep the names they always had.
func (k benchKind) name(s string) string {
	if k.kind.Name == masterkind.ReferenceName {
		return s
	}
	return fmt.Sprintf("[%s] %s", k.kind.Name, s)
}

// slug prefixes a plot's file name the same way.
func (k benchKind) slug(s string) string {
	if k.kind.Name == masterkind.ReferenceName {
		return s
	}
	return k.kind.Name + "-" + s
}

// up boots the process runtime's cluster of shape with this kind's masters
// and returns it with the load's client of them. config is the reference
// master's (upstream's takes none).
func (k benchKind) up(ctx context.Context, b *testing.B, g *proc.Group, bins cluster.Binaries, dir string, shape cluster.Shape) (*cluster.Cluster, *cluster.Env, traffic.Client) {
	b.Helper()
	var env *cluster.Env
	var cli traffic.Client = client.New(30 * time.Second)
	if k.kind.Name == masterkind.MooncakeName {
		path, err := masterkind.MooncakeBinary()
		if err != nil {
			b.Fatal(err)
		}
		bins.Master = cluster.BinaryInfo{Name: "mooncake_master", Version: "user build", Path: path}
		shape.Driver, shape.MasterConfig = mooncake.NewDriver(path, g, mooncake.FlagsFromEnv()), nil
		mc := mooncake.NewClient(func(ctx context.Context) (string, error) {
			_, url, err := env.PrimaryURL(ctx)
			return url, err
		})
		b.Cleanup(mc.Close)
		cli = mc
	}
	c, err := cluster.Up(ctx, g, bins, shape, filepath.Join(dir, "cluster"))
	if err != nil {
		b.Fatal(err)
	}
	env = cluster.NewEnv(c, keyspace.Must(shape.ClusterID), 1)
	return c, env, cli
}

// roundsFrom reads a round count from the environment (def when unset).
func roundsFrom(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}
