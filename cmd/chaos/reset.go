package main

// chaos reset: the operator's destructive recovery of the RFC ("Upgrade,
// Rollback, and Destructive Recovery"). A new cluster namespace is the
// recommended method (reset new-namespace prints the procedure); an in-place
// namespace is reused only after every writer and standby is stopped and
// fenced, its keys, leases and snapshot objects are removed (reset delete),
// and a linearizable emptiness check over every managed prefix (reset check)
// finds nothing. No master calls any of this: it never runs automatically.

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/oplogha/oplogha/harness/pki"
	"github.com/oplogha/oplogha/impl/keyspace"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
)

// Environment variables holding the S3 credentials (the master's defaults
// for s3_access_key_env and s3_secret_key_env).
const (
	envS3AccessKey = "OPLOGHA_S3_ACCESS_KEY_ID"
	envS3SecretKey = "OPLOGHA_S3_SECRET_ACCESS_KEY"
)

// Bounds of the reads.
const (
	resetPageKeys      = 1000  // keys per page of a keys-only listing
	resetPageValues    = 100   // keys per page of a listing with values
	resetMaxAttempts   = 3     // whole scans retried when etcd compacted the read revision away
	resetMaxUploadPage = 10000 // pages of incomplete multipart uploads
	resetDeleteBatch   = 1000  // objects per multi-object delete
)

func cmdReset(ctx context.Context, args []string) error {
	return runReset(ctx, args, os.Stdout, os.Stderr)
}

const resetUsage = `usage:
  chaos reset check --etcd URLS --cluster-id C [object store flags] [etcd TLS/auth flags]
      linearizable emptiness check of /oplog/C and {s3_prefix}/C/; exit 0 only when empty
  chaos reset delete --etcd URLS --cluster-id C --confirm C [object store flags] [etcd TLS/auth flags]
      DESTRUCTIVE: revoke the namespace's leases, delete its keys and snapshot objects, then check
  chaos reset new-namespace --cluster-id C [--new-cluster-id N] [flags of the check to print]
      print the recommended procedure: move the cluster to a fresh namespace
object store flags: --s3-endpoint URL --s3-bucket B [--s3-prefix P] [--s3-region R]
  (credentials from $OPLOGHA_S3_ACCESS_KEY_ID and $OPLOGHA_S3_SECRET_ACCESS_KEY), or --local-store-dir DIR [--s3-prefix P]
etcd TLS/auth flags: --etcd-cacert FILE --etcd-cert FILE --etcd-key FILE --etcd-user NAME --etcd-password-file FILE`

// runReset is cmdReset with its output streams.
func runReset(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprintln(stderr, resetUsage)
		if len(args) == 0 {
			return errors.New("want a subcommand: check, delete or new-namespace")
		}
		return nil
	}
	switch args[0] {
	case "check":
		return resetCheck(ctx, args[1:], stdout, stderr)
	case "delete":
		return resetDelete(ctx, args[1:], stdout, stderr)
	case "new-namespace":
		return resetNewNamespace(args[1:], stdout, stderr)
	}
	fmt.Fprintln(stderr, resetUsage)
	return fmt.Errorf("unknown subcommand %q: want check, delete or new-namespace", args[0])
}

// resetOpts are the flags the subcommands share.
type resetOpts struct {
	etcd, clusterID                        string
	cacert, cert, key, user, passwordFile  string
	s3Endpoint, s3Bucket, s3Prefix, region string
	localDir                               string
	timeout                                time.Duration
	maxListed                              int
}

func (o *resetOpts) bind(fs *flag.FlagSet) {
	fs.StringVar(&o.etcd, "etcd", "", "etcd client URLs, comma-separated")
	fs.StringVar(&o.clusterID, "cluster-id", "", "cluster namespace: keys under /oplog/{cluster_id}, objects under {s3_prefix}/{cluster_id}/")
	fs.StringVar(&o.cacert, "etcd-cacert", "", "CA bundle (PEM) verifying the etcd servers")
	fs.StringVar(&o.cert, "etcd-cert", "", "client certificate (PEM) for etcd")
	fs.StringVar(&o.key, "etcd-key", "", "client key (PEM) for etcd")
	fs.StringVar(&o.user, "etcd-user", "", "etcd user (with --etcd-password-file)")
	fs.StringVar(&o.passwordFile, "etcd-password-file", "", "file holding the etcd user's password (never printed)")
	fs.StringVar(&o.s3Endpoint, "s3-endpoint", "", "S3 endpoint URL, http(s)://host:port")
	fs.StringVar(&o.s3Bucket, "s3-bucket", "", "bucket dedicated to snapshots")
	fs.StringVar(&o.s3Prefix, "s3-prefix", "", "key prefix dedicated to snapshots (the master's s3_prefix)")
	fs.StringVar(&o.region, "s3-region", "us-east-1", "S3 region")
	fs.StringVar(&o.localDir, "local-store-dir", "", "directory used as the snapshot store (the master's local_store_dir), instead of S3")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "bound of the whole command")
	fs.IntVar(&o.maxListed, "max-listed", 200, "residue lines printed per kind (keys, leases, objects); the counts are always complete")
}

func parseReset(name string, args []string, stderr io.Writer, extra func(*flag.FlagSet)) (resetOpts, error) {
	var o resetOpts
	fs := flag.NewFlagSet("reset "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	o.bind(fs)
	if extra != nil {
		extra(fs)
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if _, err := keyspace.New(o.clusterID); err != nil {
		return o, fmt.Errorf("--cluster-id: %w", err)
	}
	if o.maxListed < 0 {
		return o, fmt.Errorf("--max-listed %d: want >= 0", o.maxListed)
	}
	if o.timeout <= 0 {
		return o, fmt.Errorf("--timeout %v: want > 0", o.timeout)
	}
	return o, nil
}

// endpoints splits --etcd.
func (o resetOpts) endpoints() ([]string, error) {
	var eps []string
	for e := range strings.SplitSeq(o.etcd, ",") {
		if e = strings.TrimSpace(e); e != "" {
			eps = append(eps, e)
		}
	}
	if len(eps) == 0 {
		return nil, errors.New("--etcd: want one or more client URLs, comma-separated")
	}
	return eps, nil
}

// etcdTLS builds the client TLS configuration, nil for plaintext. TLS is on
// when a CA, a client certificate or an https:// endpoint is given; a
// plaintext http:// endpoint together with TLS flags is refused rather than
// silently dialled without TLS.
func (o resetOpts) etcdTLS(eps []string) (*tls.Config, error) {
	flags := o.cacert != "" || o.cert != "" || o.key != ""
	secure := false
	for _, e := range eps {
		switch {
		case strings.HasPrefix(e, "https://"):
			secure = true
		case strings.HasPrefix(e, "http://") && flags:
			return nil, fmt.Errorf("--etcd %s is plaintext http:// but TLS flags are set: use https://", e)
		}
	}
	if !flags && !secure {
		return nil, nil
	}
	if (o.cert == "") != (o.key == "") {
		return nil, errors.New("--etcd-cert and --etcd-key go together")
	}
	cfg, err := pki.LoadClientTLS(o.cacert, o.cert, o.key)
	if err != nil {
		return nil, fmt.Errorf("--etcd-cacert/--etcd-cert/--etcd-key: %w", err)
	}
	return cfg, nil
}

// etcdPassword reads the password file (one line; the trailing newline is
// not part of the password).
func (o resetOpts) etcdPassword() (string, error) {
	if (o.user == "") != (o.passwordFile == "") {
		return "", errors.New("--etcd-user and --etcd-password-file go together")
	}
	if o.passwordFile == "" {
		return "", nil
	}
	data, err := os.ReadFile(o.passwordFile)
	if err != nil {
		return "", fmt.Errorf("--etcd-password-file: %w", err)
	}
	pw := strings.TrimRight(string(data), "\r\n")
	if pw == "" {
		return "", fmt.Errorf("--etcd-password-file %s is empty", o.passwordFile)
	}
	return pw, nil
}

// etcdClient connects with the TLS and auth flags.
func (o resetOpts) etcdClient(ctx context.Context) (*clientv3.Client, error) {
	eps, err := o.endpoints()
	if err != nil {
		return nil, err
	}
	tc, err := o.etcdTLS(eps)
	if err != nil {
		return nil, err
	}
	pw, err := o.etcdPassword()
	if err != nil {
		return nil, err
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: eps, DialTimeout: 10 * time.Second, TLS: tc,
		Username: o.user, Password: pw, Logger: zap.NewNop(), Context: ctx})
	if err != nil {
		return nil, fmt.Errorf("etcd %s: %w", strings.Join(eps, ","), err)
	}
	return cli, nil
}

// objectRoot is {s3_prefix}/{cluster_id}/, the master's storePrefix plus
// the slash that keeps a neighbour namespace (C10 next to C1) out.
func (o resetOpts) objectRoot() string { return path.Join(o.s3Prefix, o.clusterID) + "/" }

// objects opens the snapshot store the flags name (nil: none named).
func (o resetOpts) objects() (resetStore, error) {
	switch {
	case o.s3Endpoint != "" && o.localDir != "":
		return nil, errors.New("--s3-endpoint and --local-store-dir: name one object store")
	case o.localDir != "":
		return localObjects{dir: o.localDir}, nil
	case o.s3Endpoint == "":
		if o.s3Bucket != "" {
			return nil, errors.New("--s3-bucket without --s3-endpoint")
		}
		return nil, nil
	}
	if o.s3Bucket == "" {
		return nil, errors.New("--s3-endpoint needs --s3-bucket")
	}
	u, err := url.Parse(o.s3Endpoint)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("--s3-endpoint %q: want http(s)://host:port", o.s3Endpoint)
	}
	access, secret := os.Getenv(envS3AccessKey), os.Getenv(envS3SecretKey)
	if access == "" || secret == "" {
		return nil, fmt.Errorf("S3 credentials: set %s and %s", envS3AccessKey, envS3SecretKey)
	}
	c, err := minio.NewCore(u.Host, &minio.Options{Creds: credentials.NewStaticV4(access, secret, ""),
		Secure: u.Scheme == "https", Region: o.region, BucketLookup: minio.BucketLookupPath})
	if err != nil {
		return nil, fmt.Errorf("s3 client: %w", err)
	}
	return s3Objects{core: c, bucket: o.s3Bucket}, nil
}

// keyClass is one managed key or prefix of the namespace.
type keyClass struct {
	name   string
	key    string
	prefix bool
}

// managedKeys lists every key and prefix a master writes (impl/keyspace).
// The election keys live under LeaderCandidates (concurrency.NewElection
// adds the slash to the election prefix).
func managedKeys(ks keyspace.Keyspace) []keyClass {
	return []keyClass{
		{"batches", ks.BatchPrefix(), true},
		{"durable_prefix", ks.DurablePrefix(), false},
		{"producer_view", ks.ProducerView(), false},
		{"leader", ks.LeaderCandidates(), true},
		{"snapshot/writer", ks.SnapshotWriter(), false},
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
	// pointers, election and writer keys, anything unknown: few and small)
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
// residue (up to max lines per kind) and a summary otherwise.
func printScan(w io.Writer, s scanResult, maxLines int) {
	if s.empty() {
		fmt.Fprintf(w, "namespace %s is empty at revision %d\n", s.Root, s.Revision)
		return
	}
	if s.Total > 0 {
		fmt.Fprintf(w, "etcd: %d keys under %s/ at revision %d (one linearizable read):\n", s.Total, s.Root, s.Revision)
		for _, n := range classNames() {
			if s.Counts[n] != 0 {
				fmt.Fprintf(w, "  %-26s %d\n", n, s.Counts[n])
			}
		}
	}
	for i, k := range s.Keys {
		if i == maxLines {
			fmt.Fprintf(w, "... and %d more keys\n", len(s.Keys)-maxLines)
			break
		}
		lease := "  lease none"
		switch {
		case k.LeaseUnread:
			lease = "" // a batch key, listed keys only
		case k.Lease != 0:
			lease = fmt.Sprintf("  lease %016x", k.Lease)
		}
		fmt.Fprintf(w, "key %s  [%s]  mod_revision %d%s\n", k.Key, k.Class, k.ModRevision, lease)
	}
	for i, l := range s.Leases {
		if i == maxLines {
			fmt.Fprintf(w, "... and %d more leases\n", len(s.Leases)-maxLines)
			break
		}
		if !l.Alive {
			fmt.Fprintf(w, "lease %016x  expired since the read\n", l.ID)
			continue
		}
		fmt.Fprintf(w, "lease %016x  alive, ttl %ds (granted %ds), %d attached keys in %s/", l.ID, l.TTL, l.Granted, l.Keys, s.Root)
		if len(l.Foreign) > 0 {
			fmt.Fprintf(w, ", %d outside it (first %s)", len(l.Foreign), l.Foreign[0])
		}
		fmt.Fprintln(w)
	}
	for i, o := range s.Objects {
		if i == maxLines {
			fmt.Fprintf(w, "... and %d more objects\n", len(s.Objects)-maxLines)
			break
		}
		if o.UploadID != "" {
			fmt.Fprintf(w, "upload %s  upload id %s  (incomplete multipart upload)\n", o.Key, o.UploadID)
		} else {
			fmt.Fprintf(w, "object %s  %d bytes\n", o.Key, o.Size)
		}
	}
	objs := "objects not checked"
	if s.Checked {
		objs = fmt.Sprintf("%d objects and %d incomplete uploads in %s", len(s.Objects)-s.uploads(), s.uploads(), s.Store)
	}
	fmt.Fprintf(w, "namespace %s is NOT empty at revision %d: %d keys, %d live leases, %s\n",
		s.Root, s.Revision, s.Total, s.liveLeases(), objs)
}

// session is what check and delete share: the options, an etcd client, the
// object store.
type session struct {
	o   resetOpts
	ks  keyspace.Keyspace
	cli *clientv3.Client
	st  resetStore
}

func openSession(ctx context.Context, o resetOpts) (*session, error) {
	ks, err := keyspace.New(o.clusterID)
	if err != nil {
		return nil, err
	}
	st, err := o.objects()
	if err != nil {
		return nil, err
	}
	cli, err := o.etcdClient(ctx)
	if err != nil {
		return nil, err
	}
	return &session{o: o, ks: ks, cli: cli, st: st}, nil
}

// check runs the emptiness check and prints its verdict: errFailed when
// anything remains.
func (s *session) check(ctx context.Context, stdout, stderr io.Writer) error {
	res, err := scanNamespace(ctx, s.cli, s.ks, s.st, s.o.objectRoot())
	if err != nil {
		return err
	}
	printScan(stdout, res, s.o.maxListed)
	if !res.Checked {
		fmt.Fprintf(stderr, "note: snapshot objects not checked: name the store with --s3-endpoint/--s3-bucket/--s3-prefix or --local-store-dir\n")
	}
	if !res.empty() {
		return errFailed
	}
	return nil
}

func resetCheck(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseReset("check", args, stderr, nil)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	s, err := openSession(ctx, o)
	if err != nil {
		return err
	}
	defer s.cli.Close()
	return s.check(ctx, stdout, stderr)
}

func resetDelete(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var confirm string
	o, err := parseReset("delete", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&confirm, "confirm", "", "the cluster id again: this deletes the namespace")
	})
	if err != nil {
		return err
	}
	if confirm != o.clusterID {
		return fmt.Errorf("refused: --confirm %q does not repeat --cluster-id %q; reset delete removes every key, lease and snapshot object of /oplog/%s and cannot be undone", confirm, o.clusterID, o.clusterID)
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	s, err := openSession(ctx, o)
	if err != nil {
		return err
	}
	defer s.cli.Close()
	root := s.ks.Root() + "/"
	objRoot := s.o.objectRoot()
	before, err := scanNamespace(ctx, s.cli, s.ks, s.st, objRoot)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "reset delete %s: found %d keys at revision %d, %d live leases, %d objects/uploads\n",
		s.ks.Root(), before.Total, before.Revision, before.liveLeases(), len(before.Objects))
	if before.liveLeases() > 0 {
		fmt.Fprintln(stderr, "warning: live leases: a master may still be running; every writer and standby must be stopped and fenced before the namespace is reused")
	}
	// 1. Leases first, so that a lease holder's keep-alive fails. A lease
	// also holding keys outside the namespace is not revoked (that would
	// delete those keys): its namespace keys go with the range delete.
	for _, l := range before.Leases {
		switch {
		case !l.Alive:
			continue
		case len(l.Foreign) > 0:
			fmt.Fprintf(stdout, "kept lease %016x: it also holds %d keys outside %s (first %s); its keys inside are deleted below\n", l.ID, len(l.Foreign), root, l.Foreign[0])
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

func resetNewNamespace(args []string, stdout, stderr io.Writer) error {
	var next string
	o, err := parseReset("new-namespace", args, stderr, func(fs *flag.FlagSet) {
		fs.StringVar(&next, "new-cluster-id", "", "the fresh cluster id (default: {cluster_id}-r{UTC time})")
	})
	if err != nil {
		return err
	}
	if next == "" {
		next = fmt.Sprintf("%s-r%s", o.clusterID, time.Now().UTC().Format("20060102t150405z"))
		if _, err := keyspace.New(next); err != nil {
			next = "r" + time.Now().UTC().Format("20060102t150405z")
		}
	}
	if _, err := keyspace.New(next); err != nil {
		return fmt.Errorf("--new-cluster-id: %w", err)
	}
	if next == o.clusterID {
		return fmt.Errorf("--new-cluster-id %q is the old cluster id: a new namespace needs a fresh one", next)
	}
	old, nu := o, o
	nu.clusterID = next
	w := stdout
	fmt.Fprintf(w, "Destructive recovery into a new cluster namespace (the RFC's recommended method).\n")
	fmt.Fprintf(w, "Old namespace: /oplog/%s (etcd), %s (objects). New namespace: /oplog/%s, %s.\n\n", o.clusterID, old.objectRoot(), next, nu.objectRoot())
	fmt.Fprintf(w, "1. Stop every master of %s (primary and standbys) and keep them stopped: nothing may run with cluster_id %s again.\n", o.clusterID, o.clusterID)
	fmt.Fprintf(w, "   The old namespace is left as it is (no process writes it any more); remove it later with\n   %s\n", checkCommand(old, "delete", "--confirm "+o.clusterID))
	fmt.Fprintf(w, "2. Pick a cluster id never used before on this etcd and bucket: %s\n", next)
	fmt.Fprintf(w, "3. Change the configuration of every master:\n")
	fmt.Fprintf(w, "     cluster_id: %s          (was %s; etcd keys move to /oplog/%s)\n", next, o.clusterID, next)
	fmt.Fprintf(w, "   Keep etcd_endpoints, s3_endpoint, s3_bucket and s3_prefix: snapshots go under %s, apart from %s.\n", nu.objectRoot(), old.objectRoot())
	fmt.Fprintf(w, "   With snapshot_bootstrap_mode: legacy-import, set legacy_import_cluster_id explicitly: it defaults to cluster_id,\n   which now names the new namespace.\n")
	fmt.Fprintf(w, "   Update whatever else names the cluster id (dashboards, alerts, etcd auth roles granting /oplog/%s/).\n", next)
	fmt.Fprintf(w, "4. Before the first master starts, the new namespace must be empty; this must print\n   \"namespace /oplog/%s is empty at revision R\" and exit 0:\n", next)
	fmt.Fprintf(w, "     %s\n", checkCommand(nu, "check", ""))
	fmt.Fprintf(w, "   Any residue means the id was used before: pick another id (or clean it with reset delete) and check again.\n")
	fmt.Fprintf(w, "5. Start the masters with the new configuration; they bootstrap an empty cluster.\n")
	return nil
}

// checkCommand spells a reset command line with the flags given (never a
// password, only the file that holds it).
func checkCommand(o resetOpts, sub, extra string) string {
	parts := []string{"chaos reset", sub}
	add := func(flag, v string) {
		if v != "" {
			parts = append(parts, flag+" "+v)
		}
	}
	etcd := o.etcd
	if etcd == "" {
		etcd = "URLS"
	}
	add("--etcd", etcd)
	add("--cluster-id", o.clusterID)
	add("--etcd-cacert", o.cacert)
	add("--etcd-cert", o.cert)
	add("--etcd-key", o.key)
	add("--etcd-user", o.user)
	add("--etcd-password-file", o.passwordFile)
	switch {
	case o.localDir != "":
		add("--local-store-dir", o.localDir)
		add("--s3-prefix", o.s3Prefix)
	case o.s3Endpoint != "":
		add("--s3-endpoint", o.s3Endpoint)
		add("--s3-bucket", o.s3Bucket)
		add("--s3-prefix", o.s3Prefix)
	default:
		parts = append(parts, "--s3-endpoint URL --s3-bucket B --s3-prefix P")
	}
	if extra != "" {
		parts = append(parts, extra)
	}
	return strings.Join(parts, " ")
}

// resetStore is the snapshot store as reset sees it: list and remove
// everything under a prefix.
type resetStore interface {
	list(ctx context.Context, prefix string) ([]objectResidue, error)
	remove(ctx context.Context, objs []objectResidue) error
	describe(prefix string) string
}

// s3Objects is an S3 bucket (minio-go, as the master's store).
type s3Objects struct {
	core   *minio.Core
	bucket string
}

func (s s3Objects) describe(prefix string) string { return "s3://" + s.bucket + "/" + prefix }

// list lists the objects under prefix and the multipart uploads started
// there and never completed (a killed writer's; one could still be
// completed by a stale process).
func (s s3Objects) list(ctx context.Context, prefix string) ([]objectResidue, error) {
	var out []objectResidue
	for oi := range s.core.Client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if oi.Err != nil {
			return nil, fmt.Errorf("list objects: %w", oi.Err)
		}
		out = append(out, objectResidue{Key: oi.Key, Size: oi.Size})
	}
	keyMarker, idMarker := "", ""
	for page := 0; ; page++ {
		if page == resetMaxUploadPage {
			return nil, fmt.Errorf("more than %d pages of incomplete uploads under %s", resetMaxUploadPage, prefix)
		}
		r, err := s.core.ListMultipartUploads(ctx, s.bucket, prefix, keyMarker, idMarker, "", 1000)
		if err != nil {
			if minio.ToErrorResponse(err).Code == "NoSuchUpload" {
				break // gofakes3's answer for a bucket that never had an upload; S3 lists none
			}
			return nil, fmt.Errorf("list multipart uploads: %w", err)
		}
		for _, u := range r.Uploads {
			out = append(out, objectResidue{Key: u.Key, UploadID: u.UploadID})
		}
		if !r.IsTruncated || (r.NextKeyMarker == keyMarker && r.NextUploadIDMarker == idMarker) {
			break
		}
		keyMarker, idMarker = r.NextKeyMarker, r.NextUploadIDMarker
	}
	return out, nil
}

func (s s3Objects) remove(ctx context.Context, objs []objectResidue) error {
	var keys []string
	var errs []error
	for _, o := range objs {
		if o.UploadID != "" {
			if err := s.core.AbortMultipartUpload(ctx, s.bucket, o.Key, o.UploadID); err != nil {
				if minio.ToErrorResponse(err).Code != "NoSuchUpload" {
					errs = append(errs, fmt.Errorf("abort upload %s %s: %w", o.Key, o.UploadID, err))
				}
			}
			continue
		}
		keys = append(keys, o.Key)
	}
	for len(keys) > 0 {
		n := min(len(keys), resetDeleteBatch)
		ch := make(chan minio.ObjectInfo, n)
		for _, k := range keys[:n] {
			ch <- minio.ObjectInfo{Key: k}
		}
		close(ch)
		for e := range s.core.Client.RemoveObjects(ctx, s.bucket, ch, minio.RemoveObjectsOptions{}) {
			if e.Err != nil && minio.ToErrorResponse(e.Err).Code != "NoSuchKey" {
				errs = append(errs, fmt.Errorf("delete %s: %w", e.ObjectName, e.Err))
			}
		}
		keys = keys[n:]
	}
	return errors.Join(errs...)
}

// localObjects is a directory used as the store (impl/objstore/localdir).
type localObjects struct{ dir string }

func (l localObjects) describe(prefix string) string {
	return "local:" + path.Join(l.dir, prefix) + "/"
}

func (l localObjects) list(ctx context.Context, prefix string) ([]objectResidue, error) {
	if _, err := os.Stat(l.dir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no directory: no objects (and none is created)
	}
	infos, err := (&localdir.Store{Root: l.dir}).List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	out := make([]objectResidue, 0, len(infos))
	for _, in := range infos {
		out = append(out, objectResidue{Key: in.Key, Size: in.Size})
	}
	return out, nil
}

func (l localObjects) remove(ctx context.Context, objs []objectResidue) error {
	keys := make([]string, 0, len(objs))
	for _, o := range objs {
		keys = append(keys, o.Key)
	}
	return (&localdir.Store{Root: l.dir}).Delete(ctx, keys)
}
