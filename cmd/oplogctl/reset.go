package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"time"

	"github.com/oplogha/oplogha/impl/connect"
	"github.com/oplogha/oplogha/impl/reset"
)

const resetUsage = `  oplogctl reset check --etcd URLS --cluster-id C [object store flags] [etcd TLS/auth flags]
      linearizable emptiness check of /oplog/C and {s3_prefix}/C/; exit 0 only when empty
  oplogctl reset delete --etcd URLS --cluster-id C --confirm C [object store flags] [etcd TLS/auth flags]
      DESTRUCTIVE: revoke the namespace's leases, delete its keys and snapshot objects, then check
  oplogctl reset new-namespace --cluster-id C [--new-cluster-id N] [flags of the check to print]
      print the recommended procedure: move the cluster to a fresh namespace
    object store flags: --s3-endpoint URL --s3-bucket B [--s3-prefix P] [--s3-region R]
      (credentials from $OPLOGHA_S3_ACCESS_KEY_ID and $OPLOGHA_S3_SECRET_ACCESS_KEY), or --local-store-dir DIR [--s3-prefix P]
    etcd TLS/auth flags: --etcd-cacert FILE --etcd-cert FILE --etcd-key FILE --etcd-user NAME --etcd-password-file FILE`

// runReset is the operator's destructive recovery of a cluster namespace
// (impl/reset): flags in, the library's verdict out. No master runs it.
func runReset(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("want a subcommand: check, delete or new-namespace")
	}
	sub := args[0]
	var o reset.Options
	var confirm, next string
	timeout := 2 * time.Minute
	fs := flag.NewFlagSet("reset "+sub, flag.ContinueOnError)
	targetFlags(fs, &o.Target)
	fs.DurationVar(&timeout, "timeout", timeout, "bound of the whole command")
	fs.IntVar(&o.MaxListed, "max-listed", 200, "residue lines printed per kind (keys, leases, objects); the counts are always complete")
	switch sub {
	case "check":
	case "delete":
		fs.StringVar(&confirm, "confirm", "", "the cluster id again: this deletes the namespace")
	case "new-namespace":
		fs.StringVar(&next, "new-cluster-id", "", "the fresh cluster id (default: {cluster_id}-r{UTC time})")
	default:
		return usagef("unknown subcommand %q: want check, delete or new-namespace", sub)
	}
	if err := parseCommand(fs, args[1:], stdout, &timeout); err != nil {
		return err
	}
	if err := o.Validate(); err != nil {
		return usageError{err}
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var err error
	switch sub {
	case "check":
		err = reset.Check(ctx, o, stdout, stderr)
	case "delete":
		err = reset.Delete(ctx, o, confirm, stdout, stderr)
	default:
		err = reset.NewNamespace(o, next, stdout)
	}
	var oe *connect.OptionError
	switch {
	case errors.Is(err, reset.ErrNotEmpty):
		return errVerdict
	case errors.As(err, &oe):
		return usageError{err}
	}
	return err
}
