package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/oplogha/oplogha/impl/connect"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/contract/verify"
	"github.com/oplogha/oplogha/impl/objstore"
)

const verifyUsage = `  oplogctl verify --etcd URLS --cluster-id C [object store flags] [etcd TLS/auth flags] [--json]
      read the namespace at one revision and judge it: every batch record (checksum, shape, contiguity),
      the durable prefix against its terminal batch, the producer view, the floor against the pointers,
      and, with an object store, each pointer's snapshot; one line per violation; exit 1 on any`

// progressEvery is how many keys pass between progress lines on stderr.
const progressEvery = 100000

// runVerify reads a live namespace and prints every violation it finds.
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var t connect.Target
	var asJSON bool
	timeout := 10 * time.Minute
	fs := flag.NewFlagSet("verify", flag.ContinueOnError)
	targetFlags(fs, &t)
	fs.BoolVar(&asJSON, "json", false, "print the report as JSON")
	fs.DurationVar(&timeout, "timeout", timeout, "bound of the whole command")
	if err := parseCommand(fs, args, stdout, &timeout); err != nil {
		return err
	}
	if err := t.ValidateConnect(); err != nil {
		return usageError{err}
	}
	ks, err := keyspace.New(t.ClusterID)
	if err != nil {
		return usagef("--cluster-id: %v", err)
	}
	store, err := t.Store()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cli, err := t.EtcdClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	var opt verify.Options
	if store != nil {
		opt.Store, opt.ObjectRoot = objstore.Getter(store), t.ObjectRoot()
	}
	next := int64(progressEvery)
	opt.Progress = func(keys int64) {
		if keys >= next {
			fmt.Fprintf(stderr, "verify: %d keys read…\n", keys)
			next = keys + progressEvery
		}
	}
	rep, err := verify.Namespace(ctx, cli, ks, opt)
	if err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
	} else {
		printVerify(stdout, rep, store)
	}
	if !rep.OK() {
		return errVerdict
	}
	return nil
}

// printVerify prints one line per violation, then what was read.
func printVerify(w io.Writer, rep *verify.Report, store objstore.Store) {
	for _, v := range rep.Violations {
		fmt.Fprintf(w, "%s: %s\n", v.Key, v.Reason)
	}
	fmt.Fprintf(w, "%s at revision %d: %d keys, %d batch records", rep.Root, rep.Revision, rep.Keys, rep.Batches)
	if rep.Batches > 0 {
		fmt.Fprintf(w, " (%d..%d)", rep.FirstBatch, rep.LastBatch)
	}
	switch {
	case !rep.PrefixPresent:
		fmt.Fprint(w, "; no durable prefix")
	default:
		fmt.Fprintf(w, "; durable prefix batch %d seq %d", rep.Prefix.BatchID, rep.Prefix.LastSeq)
	}
	if rep.View > 0 {
		fmt.Fprintf(w, "; producer view %d", rep.View)
	}
	if rep.FloorPresent {
		fmt.Fprintf(w, "; compaction floor %d", rep.Floor)
	}
	fmt.Fprintln(w)
	for _, p := range rep.Pointers {
		how := "not opened (no object store named)"
		switch {
		case p.Opened:
			how = "opened from " + rep.Store + " and verified"
		case store != nil:
			how = "does not verify"
		}
		fmt.Fprintf(w, "  %s pointer: %s at batch %d seq %d, %s\n", p.Slot, p.SnapshotID, p.BatchID, p.Seq, how)
	}
	if len(rep.Unknown) > 0 {
		fmt.Fprintf(w, "  keys this contract does not name (not judged): %s\n", strings.Join(rep.Unknown, ", "))
	}
	if rep.OK() {
		fmt.Fprintln(w, "ok: no violation")
	} else {
		fmt.Fprintf(w, "FAIL: %d violations\n", len(rep.Violations))
	}
}
