package reset

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

type keyClass struct {
	name   string
	key    string
	prefix bool
}

// managedKeys lists every key and prefix a master writes (impl/contract/keyspace).
// The election keys live under leader + "/" (concurrency.NewElection adds
// the slash).
func managedKeys(ks keyspace.Keyspace) []keyClass {
	return []keyClass{
		{"batches", ks.BatchPrefix(), true},
		{"durable_prefix", ks.DurablePrefix(), false},
		{"producer_view", ks.ProducerView(), false},
		{"leader", ks.LeaderCandidates(), true},
		{"snapshot/maintenance", ks.SnapshotMaintenance(), false},
		{"snapshot/latest", ks.SnapshotLatest(), false},
		{"snapshot/fallback", ks.SnapshotFallback(), false},
		{"snapshot/compaction_floor", ks.CompactionFloor(), false},
		{"snapshot/legacy_import", ks.LegacyImport(), false},
	}
}

// classNames is the order residue counts are printed in.
func classNames() []string {
	var names []string
	for _, c := range managedKeys(keyspace.Must("x")) {
		names = append(names, c.name)
	}
	return append(names, "unknown")
}

// classify names the managed key or prefix key belongs to, "unknown" when none.
func classify(classes []keyClass, key string) string {
	for _, c := range classes {
		if key == c.key || (c.prefix && strings.HasPrefix(key, c.key)) {
			return c.name
		}
	}
	return "unknown"
}

// keyResidue is one key left in the namespace.
type keyResidue struct {
	Key         string
	Class       string
	ModRevision int64
	Lease       int64
	LeaseUnread bool // read keys only (etcd's keys-only range carries no lease)
}

// leaseResidue is a lease attached to namespace keys.
type leaseResidue struct {
	ID      int64
	Alive   bool
	TTL     int64
	Granted int64
	Keys    int      // attached keys inside the namespace
	Foreign []string // attached keys outside it
}

// objectResidue is a snapshot object, or an incomplete multipart upload.
type objectResidue struct {
	Key      string
	Size     int64
	UploadID string
}

// scanResult is what a check finds.
type scanResult struct {
	Root     string // /oplog/C
	Revision int64  // the one revision every etcd read was made at
	Counts   map[string]int64
	Total    int64
	Keys     []keyResidue
	Leases   []leaseResidue
	Objects  []objectResidue // nil and !Checked: no store named
	Store    string          // where the objects were listed
	Checked  bool
}

func (s scanResult) liveLeases() int {
	n := 0
	for _, l := range s.Leases {
		if l.Alive {
			n++
		}
	}
	return n
}

func (s scanResult) uploads() int {
	n := 0
	for _, o := range s.Objects {
		if o.UploadID != "" {
			n++
		}
	}
	return n
}

func (s scanResult) empty() bool {
	return s.Total == 0 && s.liveLeases() == 0 && len(s.Objects) == 0
}

// scanNamespace reads the namespace: one linearizable transaction counts
// every managed prefix and the whole namespace at one revision R, the keys
// are then listed page by page at R (the batches keys only), the leases found on them
// are asked for their TTL and attached keys, and the object store is listed
// under {s3_prefix}/C/.
func scanNamespace(ctx context.Context, cli *clientv3.Client, ks keyspace.Keyspace, st resetStore, objRoot string) (scanResult, error) {
	var err error
	for range resetMaxAttempts {
		var res scanResult
		res, err = scanEtcd(ctx, cli, ks)
		if errors.Is(err, rpctypes.ErrCompacted) {
			continue // the read revision was compacted between pages: read again at a newer one
		}
		if err != nil {
			return res, err
		}
		if st != nil {
			res.Store = st.describe(objRoot)
			res.Objects, err = st.list(ctx, objRoot)
			if err != nil {
				return res, fmt.Errorf("list %s: %w", res.Store, err)
			}
			res.Checked = true
		}
		return res, nil
	}
	return scanResult{}, fmt.Errorf("etcd compacted the read revision %d times in a row: %w", resetMaxAttempts, err)
}

func scanEtcd(ctx context.Context, cli *clientv3.Client, ks keyspace.Keyspace) (scanResult, error) {
	classes := managedKeys(ks)
	root := ks.Root() + "/"
	ops := make([]clientv3.Op, 0, len(classes)+1)
	for _, c := range classes {
		opts := []clientv3.OpOption{clientv3.WithCountOnly()}
		if c.prefix {
			opts = append(opts, clientv3.WithPrefix())
		}
		ops = append(ops, clientv3.OpGet(c.key, opts...))
	}
	ops = append(ops, clientv3.OpGet(root, clientv3.WithPrefix(), clientv3.WithCountOnly()))
	// A read-only transaction is one linearizable read (the client's default
	// consistency; no op is serializable): every count is at one revision.
	resp, err := cli.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		return scanResult{}, fmt.Errorf("read %s: %w", root, err)
	}
	res := scanResult{Root: ks.Root(), Revision: resp.Header.Revision, Counts: map[string]int64{}}
	var managed int64
	for i, c := range classes {
		n := resp.Responses[i].GetResponseRange().Count
		res.Counts[c.name] = n
		managed += n
	}
	res.Total = resp.Responses[len(classes)].GetResponseRange().Count
	res.Counts["unknown"] = res.Total - managed
	if res.Total == 0 {
		return res, nil
	}
	// Name every key, at the same revision, in pages. etcd's keys-only range
	// leaves the lease out, so the keys beside the batches (records,
	// pointers, election and maintenance keys, anything unknown: few and small)
	// are read whole; the batches, which may be many and large and are
	// never written with a lease, are read keys only.
	batches := ks.BatchPrefix()
	batchesEnd := clientv3.GetPrefixRangeEnd(batches)
	for _, r := range []struct {
		start, end string
		keysOnly   bool
	}{
		{root, batches, false},
		{batches, batchesEnd, true},
		{batchesEnd, clientv3.GetPrefixRangeEnd(root), false},
	} {
		if err := listRange(ctx, cli, r.start, r.end, res.Revision, r.keysOnly, res.Total, func(kv *mvccpb.KeyValue) {
			k := string(kv.Key)
			res.Keys = append(res.Keys, keyResidue{Key: k, Class: classify(classes, k), ModRevision: kv.ModRevision,
				Lease: kv.Lease, LeaseUnread: r.keysOnly})
		}); err != nil {
			return res, err
		}
	}
	if int64(len(res.Keys)) != res.Total {
		return res, fmt.Errorf("listing %s at revision %d found %d keys, the count said %d", root, res.Revision, len(res.Keys), res.Total)
	}
	// Leases attached to namespace keys (their TTL is read now, not at R).
	seen := map[int64]bool{}
	for _, k := range res.Keys {
		if k.Lease == 0 || seen[k.Lease] {
			continue
		}
		seen[k.Lease] = true
		l := leaseResidue{ID: k.Lease}
		ttl, err := cli.TimeToLive(ctx, clientv3.LeaseID(k.Lease), clientv3.WithAttachedKeys())
		if err != nil && !errors.Is(err, rpctypes.ErrLeaseNotFound) {
			return res, fmt.Errorf("lease %016x: %w", k.Lease, err)
		}
		if err == nil && ttl.TTL >= 0 { // -1: expired since the read
			l.Alive, l.TTL, l.Granted = true, ttl.TTL, ttl.GrantedTTL
			for _, ak := range ttl.Keys {
				if strings.HasPrefix(string(ak), root) {
					l.Keys++
				} else {
					l.Foreign = append(l.Foreign, string(ak))
				}
			}
		}
		res.Leases = append(res.Leases, l)
	}
	sort.Slice(res.Leases, func(i, j int) bool { return res.Leases[i].ID < res.Leases[j].ID })
	return res, nil
}

// listRange reads [start, end) at revision rev in pages, at most
// total/page+2 of them (total: the namespace's key count at rev).
func listRange(ctx context.Context, cli *clientv3.Client, start, end string, rev int64, keysOnly bool, total int64, each func(*mvccpb.KeyValue)) error {
	page := int64(resetPageKeys)
	opts := []clientv3.OpOption{clientv3.WithRange(end), clientv3.WithRev(rev)}
	if keysOnly {
		opts = append(opts, clientv3.WithKeysOnly())
	} else {
		page = resetPageValues
	}
	opts = append(opts, clientv3.WithLimit(page))
	for range total/page + 2 {
		g, err := cli.Get(ctx, start, opts...)
		if err != nil {
			return fmt.Errorf("list [%s, %s) at revision %d: %w", start, end, rev, err)
		}
		for _, kv := range g.Kvs {
			each(kv)
		}
		if !g.More || len(g.Kvs) == 0 {
			return nil
		}
		start = string(g.Kvs[len(g.Kvs)-1].Key) + "\x00"
	}
	return fmt.Errorf("list [%s, %s) at revision %d: still more keys after %d pages", start, end, rev, total/page+2)
}

// printScan prints the verdict: one line when the namespace is empty, every
