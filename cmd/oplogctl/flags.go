package main

import (
	"flag"
	"io"
	"time"

	"github.com/oplogha/oplogha/impl/connect"
)

// targetFlags registers the flags every command that reaches a cluster
// shares: etcd (with --endpoints, etcdctl's name, as an alias of --etcd),
// its TLS and auth, the cluster id and the snapshot store.
func targetFlags(fs *flag.FlagSet, t *connect.Target) {
	fs.StringVar(&t.Etcd, "etcd", "", "etcd client URLs, comma-separated")
	fs.StringVar(&t.Etcd, "endpoints", "", "the same as --etcd")
	fs.StringVar(&t.ClusterID, "cluster-id", "", "cluster namespace: keys under /oplog/{cluster_id}, objects under {s3_prefix}/{cluster_id}/")
	fs.StringVar(&t.EtcdCACert, "etcd-cacert", "", "CA bundle (PEM) verifying the etcd servers")
	fs.StringVar(&t.EtcdCert, "etcd-cert", "", "client certificate (PEM) for etcd")
	fs.StringVar(&t.EtcdKey, "etcd-key", "", "client key (PEM) for etcd")
	fs.StringVar(&t.EtcdUser, "etcd-user", "", "etcd user (with --etcd-password-file)")
	fs.StringVar(&t.EtcdPasswordFile, "etcd-password-file", "", "file holding the etcd user's password (never printed)")
	fs.StringVar(&t.S3Endpoint, "s3-endpoint", "", "S3 endpoint URL, http(s)://host:port")
	fs.StringVar(&t.S3Bucket, "s3-bucket", "", "bucket dedicated to snapshots")
	fs.StringVar(&t.S3Prefix, "s3-prefix", "", "key prefix dedicated to snapshots (the master's s3_prefix)")
	fs.StringVar(&t.S3Region, "s3-region", "us-east-1", "S3 region")
	fs.StringVar(&t.LocalStoreDir, "local-store-dir", "", "directory used as the snapshot store (the master's local_store_dir), instead of S3")
}

// parseCommand parses a command's flags as parseFlags does, then refuses
// positional arguments and a --timeout that is not positive (usage errors).
func parseCommand(fs *flag.FlagSet, args []string, stdout io.Writer, timeout *time.Duration) error {
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected arguments %q", pos)
	}
	if *timeout <= 0 {
		return usagef("--timeout %v: want > 0", *timeout)
	}
	return nil
}
