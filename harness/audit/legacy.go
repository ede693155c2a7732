package audit

import (
	"fmt"

	"github.com/oplogha/oplogha/impl/contract/keyspace"
	"github.com/oplogha/oplogha/impl/contract/legacysnap"
)

// LegacyImport checks the import record in etcd's history against what the
// scenario asked for: with a base, exactly one record, naming the fixture's
// snapshot, with the object and segment counts the harness read from the
// fixture itself (through the contract's reader of the legacy layout) and
// the state digest the fixture's generator computed independently
// (expect.json); without one, no record at all. (That the import revision
// moved prefix, floor and latest together is keyspace-order's to check.)
func LegacyImport(in *Input) Result {
	ks, err := keyspace.New(in.ClusterID)
	if err != nil {
		return Result{Summary: "bad cluster id", Evidence: []string{err.Error()}}
	}
	var ev evidence
	var records []legacysnap.ImportRecord
	for _, e := range in.Etcd {
		if e.Key != ks.LegacyImport() || e.Type != "put" {
			continue
		}
		m, err := legacysnap.DecodeImportRecord(e.Value)
		if err != nil {
			ev.add("rev %d: import record does not decode: %v", e.Revision, err)
			continue
		}
		records = append(records, m)
	}
	if in.Base == nil {
		for _, m := range records {
			ev.add("an import of %s was recorded, but the scenario imports nothing", m.LegacySnapshotID)
		}
		return Result{Pass: ev.empty(), Summary: "no legacy import in this scenario", Evidence: ev.list()}
	}
	b := in.Base
	switch len(records) {
	case 0:
		ev.add("no import record in etcd's history: %s from %s was never imported", b.LegacySnapshotID, b.Fixture)
	case 1:
	default:
		ev.add("%d import records written; an import happens once", len(records))
	}
	for _, m := range records {
		if m.LegacySnapshotID != b.LegacySnapshotID {
			ev.add("imported %s, the scenario's fixture names %s", m.LegacySnapshotID, b.LegacySnapshotID)
		}
		if m.StateDigest != b.Digest {
			ev.add("imported content has digest %s, the fixture's is %s", m.StateDigest, b.Digest)
		}
		if m.Objects != len(b.Objects) || m.Segments != b.Segments {
			ev.add("imported %d objects and %d segments, the fixture holds %d and %d", m.Objects, m.Segments, len(b.Objects), b.Segments)
		}
		if want := max(b.LegacySeq, 1); m.LastSeq != want {
			ev.add("imported at seq %d, want %d (the legacy sequence, at least 1)", m.LastSeq, want)
		}
	}
	summary := fmt.Sprintf("%s (%d objects, %d segments) imported", b.LegacySnapshotID, len(b.Objects), b.Segments)
	if len(records) == 1 {
		summary += " as " + records[0].SnapshotID + " by " + records[0].ImportedBy
	}
	return Result{Pass: ev.empty(), Summary: summary, Evidence: ev.list()}
}
