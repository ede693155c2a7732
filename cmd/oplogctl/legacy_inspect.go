package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/oplogha/oplogha/impl/contract/legacysnap"
	"github.com/oplogha/oplogha/impl/legacy"
	"github.com/oplogha/oplogha/impl/objstore/localdir"
)

// legacyInspect reads one legacy snapshot under DIR — the old master's
// object store root, holding mooncake_master_snapshot/{cluster}/ — and
// prints what an import would bring in and what it would leave behind,
// with --json in the shape of the golden vectors' expected.json. It only
// reads. It fails (exit 1) when the snapshot cannot be read or an import of
// it would be refused; the report is printed either way when the snapshot
// reads.
func legacyInspect(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("legacy inspect", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the report as JSON (the fields of the golden vectors' expected.json, and \"import\")")
	cluster := fs.String("cluster-id", "mooncake_cluster", "the old cluster namespace under DIR/mooncake_master_snapshot/")
	id := fs.String("snapshot", "", "the snapshot to inspect, YYYYMMDD_HHMMSS_mmm (default: the one latest.txt names)")
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one DIR (the old master's object store root, holding %s/%s/), got %d arguments", legacy.SnapshotRootBase, *cluster, len(pos))
	}
	dir := pos[0]
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return usagef("%s is not a directory", dir)
	}
	if *id != "" {
		if err := legacy.CheckID(*id); err != nil {
			return usageError{fmt.Errorf("--snapshot: %w", err)}
		}
	}
	src := legacy.Source{Store: &localdir.Store{Root: dir}}
	latest, latestFile, err := src.LatestFile(ctx, *cluster)
	var lf *legacy.File
	switch {
	case err == nil:
		lf = &latestFile
	case *id == "":
		return err
	}
	if *id == "" {
		*id = latest
	}
	snap, err := src.Read(ctx, *cluster, *id)
	if err != nil {
		return err
	}
	in := legacy.Inspect(*cluster, snap, latest, lf)
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(in); err != nil {
			return err
		}
	} else {
		printInspection(stdout, dir, snap, in)
	}
	if in.Import.Outcome != "ok" {
		if *asJSON {
			return errors.New(in.Import.Error)
		}
		return errVerdict
	}
	return nil
}

// printInspection is the report for a reader.
func printInspection(w io.Writer, dir string, snap *legacy.Snapshot, in legacy.Inspection) {
	d := in.Decoded
	fmt.Fprintf(w, "legacy snapshot %s of cluster %s under %s\n", in.SnapshotID, in.ClusterID, dir)
	fmt.Fprintf(w, "  descriptor: last_included_seq %d, producer_view_version %d, created %s\n", snap.Seq, snap.ProducerView,
		time.UnixMilli(snap.CreatedAtMS).UTC().Format(time.RFC3339Nano))
	if in.LatestTxt != "" {
		fmt.Fprintf(w, "  latest.txt names %s\n", in.LatestTxt)
	}
	fmt.Fprintf(w, "segments (%d):\n", len(d.Segments))
	for _, s := range d.Segments {
		used := "-"
		if s.Used != nil {
			used = fmt.Sprint(*s.Used)
		}
		fmt.Fprintf(w, "  %s  name %s  id %s  client %s  base %#x  capacity %d  used %s  status %s\n",
			s.Endpoint, s.Name, s.ID, s.ClientID, s.Base, s.Capacity, used, legacysnap.SegmentStatus(s.Status))
	}
	fmt.Fprintf(w, "objects (%d):\n", len(d.Objects))
	for _, o := range d.Objects {
		fmt.Fprintf(w, "  %q %q  %d bytes  shard %d\n", o.Tenant, o.Key, o.Size, o.Shard)
		for _, r := range o.Replicas {
			switch {
			case r.Address != nil:
				fmt.Fprintf(w, "    replica %d %s %s on %s at %#x, %d bytes\n", r.ID, r.Status, r.Type, *r.Segment, *r.Address, *r.Length)
			case r.ShardIdx != nil:
				fmt.Fprintf(w, "    replica %d %s %s in %s at offset %d (aligned %d, shard %d), %d bytes\n", r.ID, r.Status, r.Type, *r.FilePath,
					*r.Offset, *r.AlignedSize, *r.ShardIdx, *r.ObjectSize)
			case r.TransportEndpoint != nil:
				fmt.Fprintf(w, "    replica %d %s %s on client %s (%s), %d bytes\n", r.ID, r.Status, r.Type, *r.ClientID, *r.TransportEndpoint, *r.ObjectSize)
			default:
				fmt.Fprintf(w, "    replica %d %s %s in %s, %d bytes\n", r.ID, r.Status, r.Type, *r.FilePath, *r.ObjectSize)
			}
		}
	}
	if len(in.WrittenButNotDecoded) > 0 {
		fmt.Fprintf(w, "written but dropped by upstream's decoder (%d):\n", len(in.WrittenButNotDecoded))
		for _, s := range in.WrittenButNotDecoded {
			fmt.Fprintf(w, "  %q %q: %s (%s)\n", s.Tenant, s.Key, s.Reason, s.Segments[0])
		}
	}
	if len(in.Import.NotImported) > 0 {
		fmt.Fprintln(w, "not imported (the state model has no place for it):")
		for _, l := range in.Import.NotImported {
			fmt.Fprintf(w, "  %s: %d (%s)\n", l.What, l.Count, l.Why)
		}
	}
	if in.Import.Outcome == "ok" {
		cur := legacy.ImportCursor(snap.Seq)
		fmt.Fprintf(w, "import: ok: %d objects on %d segments, at batch %d seq %d\n", in.Import.Objects, in.Import.Segments, cur.BatchID, cur.Seq)
		return
	}
	fmt.Fprintf(w, "import: REFUSED: %s\n", in.Import.Error)
}
