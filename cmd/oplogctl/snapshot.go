package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"time"

	"github.com/oplogha/oplogha/impl/connect"
	"github.com/oplogha/oplogha/impl/contract/batchsnap"
	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/objstore"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
)

const snapshotUsage = `  oplogctl snapshot inspect [DIR] (--root R --id ID | --descriptor KEY) [--json]
  oplogctl snapshot inspect --cluster-id C --id ID (--s3-* flags | --local-store-dir DIR) [--s3-prefix P] [--json]
  oplogctl snapshot inspect --etcd URLS --cluster-id C --pointer latest|fallback (object store flags) [etcd TLS/auth flags] [--json]
      read one batch-OpLog snapshot (upstream's format) by exact keys, holding every object to its size and CRC32C
      before decoding it: its identity, descriptor, manifest, chunks, object counts and checksums; --json the decoded
      segments and objects too; exit 1 when it does not verify`

// runSnapshot dispatches the snapshot commands.
func runSnapshot(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usagef("want a subcommand: inspect")
	}
	switch args[0] {
	case "inspect":
		return snapshotInspect(ctx, args[1:], stdout, stderr)
	}
	return usagef("unknown subcommand %q: want inspect", args[0])
}

// snapshotInspect finds the snapshot's descriptor (a pointer of a live
// namespace, or a root and id, or a descriptor key), reads the whole
// snapshot and prints it. It only reads.
func snapshotInspect(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var t connect.Target
	var root, id, descriptor, pointer string
	var asJSON bool
	timeout := 30 * time.Minute
	fs := flag.NewFlagSet("snapshot inspect", flag.ContinueOnError)
	targetFlags(fs, &t)
	fs.StringVar(&root, "root", "", "the snapshot root: objects under <root>/batch-oplog/<id>/ (default {s3_prefix}/{cluster_id})")
	fs.StringVar(&id, "id", "", "the snapshot id, <last included batch>-<maintenance lease>")
	fs.StringVar(&descriptor, "descriptor", "", "the descriptor's key, instead of --root and --id")
	fs.StringVar(&pointer, "pointer", "", "latest or fallback: the snapshot a live namespace's pointer names (needs --etcd)")
	fs.BoolVar(&asJSON, "json", false, "print the view as JSON: identity, descriptor, manifest, files, segments and objects")
	fs.DurationVar(&timeout, "timeout", timeout, "bound of the whole command")
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(pos) > 1:
		return usagef("unexpected arguments %q", pos[1:])
	case len(pos) == 1 && t.LocalStoreDir != "":
		return usagef("a DIR and --local-store-dir: name one")
	case len(pos) == 1:
		t.LocalStoreDir = pos[0]
	}
	if timeout <= 0 {
		return usagef("--timeout %v: want > 0", timeout)
	}
	if err := t.ValidateStore(); err != nil {
		return usageError{err}
	}
	if t.LocalStoreDir == "" && t.S3Endpoint == "" {
		return usagef("no object store: give a DIR, --local-store-dir or --s3-endpoint")
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	named := 0
	for _, set := range []bool{pointer != "", descriptor != "", id != ""} {
		if set {
			named++
		}
	}
	if named != 1 {
		return usagef("name the snapshot once: --pointer, --descriptor, or --id (with --root or --cluster-id)")
	}
	var st objstore.Store
	if t.LocalStoreDir != "" {
		fi, err := os.Stat(t.LocalStoreDir)
		if err != nil || !fi.IsDir() {
			return usagef("%s is not a directory", t.LocalStoreDir)
		}
		st = &localdir.Store{Root: t.LocalStoreDir}
	} else if st, err = t.Store(); err != nil {
		return err
	}
	g := objstore.Getter(st)
	var h *batchsnap.Head
	switch {
	case pointer != "":
		p, err := livePointer(ctx, t, pointer)
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "snapshot: the %s pointer names %s (descriptor %s)\n", pointer, p.SnapshotID, p.DescriptorKey)
		h, err = batchsnap.OpenHead(ctx, g, p)
		if err != nil {
			return err
		}
	default:
		if descriptor == "" {
			if root == "" {
				if t.ClusterID == "" {
					return usagef("--id needs --root, or --cluster-id (the root is then {s3_prefix}/{cluster_id})")
				}
				root = path.Join(t.S3Prefix, t.ClusterID)
			}
			if _, err := batchsnap.ParseID(id); err != nil {
				return usageError{fmt.Errorf("--id: %w", err)}
			}
			descriptor = batchsnap.Artifacts(root, id).Descriptor()
		}
		if h, err = batchsnap.OpenHeadAt(ctx, g, descriptor); err != nil {
			return err
		}
	}
	total := h.Objects()
	last := time.Now()
	view, err := batchsnap.Inspect(ctx, g, h, func(key string, objects uint64) {
		if time.Since(last) > 2*time.Second {
			fmt.Fprintf(stderr, "snapshot: %d of %d objects read (%s)…\n", objects, total, key)
			last = time.Now()
		}
	})
	if asJSON {
		if err == nil {
			enc := json.NewEncoder(stdout)
			enc.SetIndent("", "  ")
			return enc.Encode(view)
		}
		return err
	}
	printSnapshot(stdout, st.Name(), h, view, err)
	if err != nil {
		return errVerdict
	}
	return nil
}

// livePointer reads a pointer slot of a live namespace.
func livePointer(ctx context.Context, t connect.Target, slot string) (batchsnap.Pointer, error) {
	if slot != "latest" && slot != "fallback" {
		return batchsnap.Pointer{}, usagef("--pointer %q: want latest or fallback", slot)
	}
	if err := t.ValidateConnect(); err != nil {
		return batchsnap.Pointer{}, usageError{err}
	}
	ks, err := keyspace.New(t.ClusterID)
	if err != nil {
		return batchsnap.Pointer{}, usagef("--cluster-id: %v", err)
	}
	cli, err := t.EtcdClient(ctx)
	if err != nil {
		return batchsnap.Pointer{}, err
	}
	defer cli.Close()
	key := ks.SnapshotLatest()
	if slot == "fallback" {
		key = ks.SnapshotFallback()
	}
	resp, err := cli.Get(ctx, key)
	if err != nil {
		return batchsnap.Pointer{}, fmt.Errorf("read %s: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return batchsnap.Pointer{}, fmt.Errorf("%s is absent: no %s snapshot", key, slot)
	}
	p, err := batchsnap.DecodePointer(resp.Kvs[0].Value)
	if err != nil {
		return batchsnap.Pointer{}, fmt.Errorf("%s: %w", key, err)
	}
	return p, nil
}

// printSnapshot is the report for a reader: what was read, and the verdict.
func printSnapshot(w io.Writer, store string, h *batchsnap.Head, v *batchsnap.View, err error) {
	d := h.Descriptor
	fmt.Fprintf(w, "snapshot %s in %s\n", d.SnapshotID, store)
	fmt.Fprintf(w, "  format     %s, schema %d\n", d.SnapshotFormat, d.SchemaVersion)
	fmt.Fprintf(w, "  cursor     batch %d seq %d, producer view %d, maintenance lease %d\n", d.LastIncludedBatchID, d.LastIncludedSeq,
		d.ProducerViewVersion, d.ID().Lease)
	fmt.Fprintf(w, "  created    %s\n", time.UnixMilli(d.CreatedAtMS).UTC().Format(time.RFC3339Nano))
	fmt.Fprintf(w, "  objects    %d in %d chunks of at most %d; %d segments\n", h.Objects(), len(h.Manifest.ObjectChunks), v.ChunkObjectCount,
		len(v.Segments))
	fmt.Fprintln(w, "  stored objects (size, CRC32C):")
	line := func(key string, size uint64, crc uint32, extra string) {
		state := "not verified"
		if _, read := v.Files[key]; read {
			state = "verified"
		}
		fmt.Fprintf(w, "    %-60s %12d  %08x  %s%s\n", key, size, crc, state, extra)
	}
	line(h.Keys.Descriptor(), uint64(len(h.DescriptorRaw)), batchsnap.CRC32C(h.DescriptorRaw), "")
	line(d.ManifestKey, d.ManifestSize, d.ManifestCRC32C, "")
	line(h.Manifest.Segments.Key, h.Manifest.Segments.StoredSize, h.Manifest.Segments.CRC32C, "")
	for _, c := range h.Manifest.ObjectChunks {
		line(c.Key, c.StoredSize, c.CRC32C, fmt.Sprintf(", %d objects", c.ObjectCount))
	}
	if err != nil {
		fmt.Fprintf(w, "FAIL: %s\n", strings.TrimSpace(err.Error()))
		return
	}
	fmt.Fprintf(w, "ok: every object verified by size and CRC32C and decoded (%d objects)\n", h.Objects())
}
