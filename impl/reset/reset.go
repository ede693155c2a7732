// Package reset is the operator's destructive recovery of a cluster
// namespace (RFC "Upgrade, Rollback, and Destructive Recovery"), the library
// behind oplogctl reset. A new cluster namespace is the recommended method
// (NewNamespace prints the procedure); an in-place namespace is reused only
// after every writer and standby is stopped and fenced, its keys, leases and
// snapshot objects are removed (Delete), and a linearizable emptiness check
// over every managed prefix (Check) finds nothing. No master calls any of
// this: it never runs automatically.
package reset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/oplogha/oplogha/impl/connect"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
)

// Command is how the procedures this package prints spell the command.
const Command = "oplogctl reset"

// ErrNotEmpty: the emptiness check found residue (printed already).
var ErrNotEmpty = errors.New("namespace not empty")

// session is what check and delete share: the options, an etcd client, the
// object store.
type session struct {
	o   Options
	ks  keyspace.Keyspace
	cli *clientv3.Client
	st  resetStore
}

func openSession(ctx context.Context, o Options) (*session, error) {
	ks, err := keyspace.New(o.ClusterID)
	if err != nil {
		return nil, err
	}
	st, err := o.objects()
	if err != nil {
		return nil, err
	}
	cli, err := o.EtcdClient(ctx)
	if err != nil {
		return nil, err
	}
	return &session{o: o, ks: ks, cli: cli, st: st}, nil
}

// check runs the emptiness check and prints its verdict: ErrNotEmpty when
// anything remains.
func (s *session) check(ctx context.Context, stdout, stderr io.Writer) error {
	res, err := scanNamespace(ctx, s.cli, s.ks, s.st, s.o.ObjectRoot())
	if err != nil {
		return err
	}
	printScan(stdout, res, s.o.MaxListed)
	if !res.Checked {
		fmt.Fprintf(stderr, "note: snapshot objects not checked: name the store with --s3-endpoint/--s3-bucket/--s3-prefix or --local-store-dir\n")
	}
	if !res.empty() {
		return ErrNotEmpty
	}
	return nil
}

// Check runs the linearizable emptiness check of /oplog/{ClusterID} and
// {S3Prefix}/{ClusterID}/ and prints its verdict to stdout: ErrNotEmpty
// when anything remains.
func Check(ctx context.Context, o Options, stdout, stderr io.Writer) error {
	if err := o.validateConnect(); err != nil {
		return err
	}
	s, err := openSession(ctx, o)
	if err != nil {
		return err
	}
	defer s.cli.Close()
	return s.check(ctx, stdout, stderr)
}

// Delete is the destructive reset of the namespace: it revokes its leases,
// deletes its keys in one range delete, then its snapshot objects and
// incomplete uploads, and runs Check. confirm must repeat the cluster id.
func Delete(ctx context.Context, o Options, confirm string, stdout, stderr io.Writer) error {
	if err := o.validateConnect(); err != nil {
		return err
	}
	if confirm != o.ClusterID {
		return fmt.Errorf("refused: --confirm %q does not repeat --cluster-id %q; reset delete removes every key, lease and "+
			"snapshot object of /oplog/%s and cannot be undone", confirm, o.ClusterID, o.ClusterID)
	}
	s, err := openSession(ctx, o)
	if err != nil {
		return err
	}
	defer s.cli.Close()
	root := s.ks.Root() + "/"
	objRoot := s.o.ObjectRoot()
	before, err := scanNamespace(ctx, s.cli, s.ks, s.st, objRoot)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "reset delete %s: found %d keys at revision %d, %d live leases, %d objects/uploads\n",
		s.ks.Root(), before.Total, before.Revision, before.liveLeases(), len(before.Objects))
	if before.liveLeases() > 0 {
		fmt.Fprintln(stderr, "warning: live leases: a master may still be running; every writer and standby must be stopped "+
			"and fenced before the namespace is reused")
	}
	// 1. Leases first, so that a lease holder's keep-alive fails. A lease
	// also holding keys outside the namespace is not revoked (that would
	// delete those keys): its namespace keys go with the range delete.
	for _, l := range before.Leases {
		switch {
		case !l.Alive:
			continue
		case len(l.Foreign) > 0:
			fmt.Fprintf(stdout, "kept lease %016x: it also holds %d keys outside %s (first %s); its keys inside are deleted below\n", l.ID,
				len(l.Foreign), root, l.Foreign[0])
			continue
		}
		if _, err := s.cli.Revoke(ctx, clientv3.LeaseID(l.ID)); err != nil {
			if errors.Is(err, rpctypes.ErrLeaseNotFound) {
				fmt.Fprintf(stdout, "lease %016x already gone\n", l.ID)
				continue
			}
			return fmt.Errorf("revoke lease %016x: %w", l.ID, err)
		}
		fmt.Fprintf(stdout, "revoked lease %016x (%d keys in %s)\n", l.ID, l.Keys, root)
	}
	// 2. Every key of the namespace, in one range delete.
	del, err := s.cli.Delete(ctx, root, clientv3.WithPrefix())
	if err != nil {
		return fmt.Errorf("delete %s: %w", root, err)
	}
	fmt.Fprintf(stdout, "deleted %d keys under %s at revision %d\n", del.Deleted, root, del.Header.Revision)
	// 3. The snapshot objects and incomplete uploads, after the pointers
	// naming them are gone.
	if s.st != nil && len(before.Objects) > 0 {
		if err := s.st.remove(ctx, before.Objects); err != nil {
			return fmt.Errorf("delete objects under %s: %w", s.st.describe(objRoot), err)
		}
		fmt.Fprintf(stdout, "deleted %d objects and aborted %d incomplete uploads under %s\n",
			len(before.Objects)-before.uploads(), before.uploads(), s.st.describe(objRoot))
	}
	// 4. The same emptiness check as reset check.
	fmt.Fprintln(stdout, "emptiness check:")
	return s.check(ctx, stdout, stderr)
}

// NewNamespace prints the recommended procedure: move the cluster to the
// fresh namespace next (empty: {cluster_id}-r{UTC time}).
func NewNamespace(o Options, next string, stdout io.Writer) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if next == "" {
		next = fmt.Sprintf("%s-r%s", o.ClusterID, time.Now().UTC().Format("20060102t150405z"))
		if _, err := keyspace.New(next); err != nil {
			next = "r" + time.Now().UTC().Format("20060102t150405z")
		}
	}
	if _, err := keyspace.New(next); err != nil {
		return connect.Errorf("--new-cluster-id: %v", err)
	}
	if next == o.ClusterID {
		return connect.Errorf("--new-cluster-id %q is the old cluster id: a new namespace needs a fresh one", next)
	}
	old, nu := o, o
	nu.ClusterID = next
	w := stdout
	fmt.Fprintf(w, "Destructive recovery into a new cluster namespace (the RFC's recommended method).\n")
	fmt.Fprintf(w, "Old namespace: /oplog/%s (etcd), %s (objects). New namespace: /oplog/%s, %s.\n\n", o.ClusterID, old.ObjectRoot(), next, nu.ObjectRoot())
	fmt.Fprintf(w, "1. Stop every master of %s (primary and standbys) and keep them stopped: nothing may run with "+
		"cluster_id %s again.\n", o.ClusterID, o.ClusterID)
	fmt.Fprintf(w, "   The old namespace is left as it is (no process writes it any more); remove it later with\n   %s\n",
		checkCommand(old, "delete", "--confirm "+o.ClusterID))
	fmt.Fprintf(w, "2. Pick a cluster id never used before on this etcd and bucket: %s\n", next)
	fmt.Fprintf(w, "3. Change the configuration of every master:\n")
	fmt.Fprintf(w, "     cluster_id: %s          (was %s; etcd keys move to /oplog/%s)\n", next, o.ClusterID, next)
	fmt.Fprintf(w, "   Keep etcd_endpoints, s3_endpoint, s3_bucket and s3_prefix: snapshots go under %s, apart from %s.\n", nu.ObjectRoot(), old.ObjectRoot())
	fmt.Fprintf(w, "   With snapshot_bootstrap_mode: legacy-import, set legacy_import_cluster_id explicitly: it defaults "+
		"to cluster_id,\n   which now names the new namespace.\n")
	fmt.Fprintf(w, "   Update whatever else names the cluster id (dashboards, alerts, etcd auth roles granting /oplog/%s/).\n", next)
	fmt.Fprintf(w, "4. Before the first master starts, the new namespace must be empty; this must print\n   \"namespace "+
		"/oplog/%s is empty at revision R\" and exit 0:\n", next)
	fmt.Fprintf(w, "     %s\n", checkCommand(nu, "check", ""))
	fmt.Fprintf(w, "   Any residue means the id was used before: pick another id (or clean it with reset delete) and check again.\n")
	fmt.Fprintf(w, "5. Start the masters with the new configuration; they bootstrap an empty cluster.\n")
	return nil
}

// checkCommand spells a reset command line with the flags given (never a
// password, only the file that holds it).
func checkCommand(o Options, sub, extra string) string {
	parts := []string{Command, sub}
	add := func(flag, v string) {
		if v != "" {
			parts = append(parts, flag+" "+v)
		}
	}
	etcd := o.Etcd
	if etcd == "" {
		etcd = "URLS"
	}
	add("--etcd", etcd)
	add("--cluster-id", o.ClusterID)
	add("--etcd-cacert", o.EtcdCACert)
	add("--etcd-cert", o.EtcdCert)
	add("--etcd-key", o.EtcdKey)
	add("--etcd-user", o.EtcdUser)
	add("--etcd-password-file", o.EtcdPasswordFile)
	switch {
	case o.LocalStoreDir != "":
		add("--local-store-dir", o.LocalStoreDir)
		add("--s3-prefix", o.S3Prefix)
	case o.S3Endpoint != "":
		add("--s3-endpoint", o.S3Endpoint)
		add("--s3-bucket", o.S3Bucket)
		add("--s3-prefix", o.S3Prefix)
	default:
		parts = append(parts, "--s3-endpoint URL --s3-bucket B --s3-prefix P")
	}
	if extra != "" {
		parts = append(parts, extra)
	}
	return strings.Join(parts, " ")
}
