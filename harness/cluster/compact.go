package cluster

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/harness/etcd"
)

// CompactDefrag is the operator's capacity routine (RFC N12): MVCC
// compaction at the current revision, physical, then a defragmentation of
// every member in turn, one at a time as the operations guide says, then a
// disarm of any alarm (NOSPACE). It reports the largest member's dbSize and
// dbSizeInUse before and after.
func (e *Env) CompactDefrag(ctx context.Context) (string, error) {
	cli, err := e.C.Etcd.Client(nil)
	if err != nil {
		return "", err
	}
	defer cli.Close()
	before := largest(e.C.Etcd.Status(ctx))
	gctx, cancel := bounded(ctx)
	resp, err := cli.Get(gctx, e.ks.DurablePrefix())
	cancel()
	if err != nil {
		return "", err
	}
	rev := resp.Header.Revision
	if e.BeforeCompact != nil {
		if err := e.BeforeCompact(ctx, rev); err != nil {
			return "", fmt.Errorf("keep history before compacting: %w", err)
		}
	}
	if _, err := cli.Compact(ctx, rev, clientv3.WithCompactPhysical()); err != nil {
		return "", fmt.Errorf("compact at %d: %w", rev, err)
	}
	for _, m := range e.C.Etcd.Members {
		if p, ok := e.C.Etcd.Process(m); !ok || !p.Running() {
			continue
		}
		if _, err := cli.Defragment(ctx, m.ClientURL); err != nil {
			return "", fmt.Errorf("defragment %s: %w", m.Name, err)
		}
	}
	after := largest(e.C.Etcd.Status(ctx))
	disarmed := ""
	actx, cancel := bounded(ctx)
	defer cancel()
	alarms, err := cli.AlarmList(actx)
	if err != nil {
		return "", fmt.Errorf("alarm list: %w", err)
	}
	if len(alarms.Alarms) > 0 {
		// etcd keeps refusing writes until the alarm is disarmed, space or not.
		if _, err := cli.AlarmDisarm(actx, &clientv3.AlarmMember{}); err != nil {
			return "", fmt.Errorf("alarm disarm: %w", err)
		}
		disarmed = fmt.Sprintf("; disarmed %d alarm(s)", len(alarms.Alarms))
	}
	return fmt.Sprintf("compacted at revision %d; largest member db %.2f MiB (in use %.2f) → %.2f MiB (in use %.2f)%s",
		rev, mib(before.DBSize), mib(before.InUse), mib(after.DBSize), mib(after.InUse), disarmed), nil
}

func largest(st []etcd.MemberStatus) etcd.MemberStatus {
	var out etcd.MemberStatus
	for _, s := range st {
		if s.DBSize > out.DBSize {
			out = s
		}
	}
	return out
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
