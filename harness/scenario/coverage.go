package scenario

import (
	"sort"
	"strings"
)

// Row is one line of the RFC a scenario can cover: a row of "Failure
// Semantics", an item of "Concurrency and Failure Injection" or of
// "Integration and E2E". A scenario covers a row when one of its `covers:`
// entries reads "<Section>: <Row>…".
type Row struct {
	Section, Row string
}

func (r Row) String() string { return r.Section + ": " + r.Row }

// RFCRows are the rows every crash window and failure story must be covered by.
var RFCRows = func() []Row {
	var rows []Row
	add := func(section string, items ...string) {
		for _, it := range items {
			rows = append(rows, Row{section, it})
		}
	}
	add("Failure Semantics",
		"No eligible standby", "Admission lag over 1000 by default", "Inconsistent batch/sequence cursor",
		"Capture memory or disk budget exceeded", "Promotion overlaps capture copy", "Promotion after immutable capture",
		"Maintenance lease lost", "Payload upload fails", "HEAD/checksum mismatch", "Backend lacks checksum metadata",
		"Pointer CAS loses a race", "Latest snapshot corrupt", "Both snapshots corrupt", "Snapshot GC partially fails",
		"Floor CAS fails", "OpLog range delete fails after floor", "Standby cursor below floor", "etcd approaches quota")
	add("Concurrency and Failure Injection",
		"Two standbys competing for the maintenance lease", "Lease expiry during capture, multipart upload, HEAD, and final CAS",
		"Promotion before capture completion and after immutable capture", "Crash after each object write and before/after pointer CAS",
		"Crash after GC and before floor CAS", "Crash after floor CAS and before OpLog deletion",
		"Concurrent new batch append during range deletion", "Latest/fallback corruption independently and together",
		"Reader crossing the floor while live")
	add("Integration and E2E",
		"Real etcd, shared S3-compatible storage, process restart, suffix replay, and promotion",
		"High write rate with snapshot admission lag near the threshold", "Large snapshot memory/disk/network measurements",
		"Old reader fixtures and explicit legacy import", "Snapshot-only configuration rejection after legacy removal",
		"Capacity soak covering key count, MVCC compaction, defrag, quota, and alarms",
		"A saved artifact bundle containing pointers, checksums, cursors, floor, timings, and final acknowledged-data audit")
	add("Security and Access Control",
		"Use TLS for etcd and object-store traffic", "Grant the snapshot writer only the required bucket/prefix operations",
		"Do not log credentials, signed URLs, payload content, or tenant keys")
	return rows
}()

// MeasuredBy names the rows a measurement covers rather than a fault
// scenario: the RFC asks for figures there, and `make bench` reports them.
var MeasuredBy = map[Row]string{
	{"Integration and E2E", "Large snapshot memory/disk/network " +
		"measurements"}: "make bench (tests/bench: Pipeline, Recovery, Codec — heap added by a publication, work-file bytes, " +
		"upload and download throughput, 300M-object peak RSS)",
}

// Coverage maps every RFC row to the scenarios that cover it (empty: uncovered).
func Coverage(scs []*Scenario) map[Row][]string {
	out := map[Row][]string{}
	for _, r := range RFCRows {
		want := strings.ToLower(r.String())
		for _, sc := range scs {
			for _, c := range sc.Covers {
				if strings.HasPrefix(strings.ToLower(c), want) {
					out[r] = append(out[r], sc.Name)
					break
				}
			}
		}
		sort.Strings(out[r])
	}
	return out
}
