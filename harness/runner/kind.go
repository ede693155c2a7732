package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/oplogha/oplogha/harness/bin"
	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/cluster"
	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/masters"
	"github.com/oplogha/oplogha/harness/mooncake"
	"github.com/oplogha/oplogha/harness/proc"
)

// useKind puts the run's master kind in place: its binary in bins, the
// driver the masters start with (nil: the reference master's) and the
// load's client of it. This is the one place the runner names a kind;
// every step and audit asks for capabilities instead.
func (r *run) useKind(group *proc.Group, bins *cluster.Binaries) (masters.Driver, error) {
	switch r.kind.Name {
	case masterkind.MooncakeName:
		path := r.opts.MasterBinary
		if path == "" {
			var err error
			if path, err = masterkind.MooncakeBinary(); err != nil {
				return nil, err
			}
		}
		sum, err := bin.FileSHA256(path)
		if err != nil {
			return nil, fmt.Errorf("mooncake_master: %w", err)
		}
		bins.Master = cluster.BinaryInfo{Name: "mooncake_master", Version: "user build", Path: path, SHA256: sum}
		primary := func(ctx context.Context) (string, error) {
			_, url, err := r.env.PrimaryURL(ctx)
			return url, err
		}
		c := mooncake.NewClient(primary)
		r.client = c
		r.closers = append(r.closers, c.Close)
		return mooncake.NewDriver(path, group, mooncake.FlagsFromEnv()), nil
	default:
		r.client = client.New(15 * time.Second)
		return nil, nil
	}
}
