package masterlog

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestShapeMasksWhatVaries: keys, addresses, ids and counts are masked; an
// error code is what tells failures apart, and is kept.
func TestShapeMasksWhatVaries(t *testing.T) {
	for in, want := range map[string]string{
		"PutEnd: OpLog queue failed for key=g0-c1-000015, err=-1002":    "PutEnd: OpLog queue failed for key=…, err=-1002",
		"PutEnd: OpLog queue failed for key=g3-c0-000201, err=-1002":    "PutEnd: OpLog queue failed for key=…, err=-1002",
		"mount segment 10.0.1.1:7000 refused, code=7 after 12 attempts": "mount segment <addr> refused, code=7 after N attempts",
		"batch 1363 at revision 71 lost its lease 694d8c2f1a3b5e7f":     "batch N at revision N lost its lease <id>",
	} {
		require.Equal(t, want, Shape(in), in)
	}
}

// TestSummarizeGroupsBothFormats: upstream's glog lines and the reference
// master's JSON lines, warnings and errors only, grouped by node, level
// and shape, most frequent first, with their first and last time.
func TestSummarizeGroupsBothFormats(t *testing.T) {
	dir := t.TempDir()
	started := time.Date(2026, 12, 6, 18, 0, 0, 0, time.Local)
	glog := "I1206 18:00:01.000000  4242 master.cpp:10] serving\n" +
		"W1206 18:00:20.270000  4242 master_service.cpp:881] PutEnd: OpLog queue failed for key=g0-c1-000015, err=-1002\n" +
		"W1206 18:00:20.500000  4242 master_service.cpp:881] PutEnd: OpLog queue failed for key=g0-c2-000016, err=-1002\n" +
		"W1206 18:00:21.230000  4242 master_service.cpp:881] PutEnd: OpLog queue failed for key=g1-c0-000001, err=-1002\n" +
		"E20261206 18:00:22.000000  4242 ha.cpp:99] etcd txn failed: code=14\n" +
		"WARNING: Logging before InitGoogleLogging() is written to STDERR\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "master-0.log"), []byte(glog), 0o644))
	at := started.Add(5 * time.Second).UTC().Format(time.RFC3339Nano)
	ref := `{"time":"` + at + `","level":"INFO","msg":"serving"}` + "\n" +
		`{"time":"` + at + `","level":"WARN","msg":"primary term ended","code":"shutdown"}` + "\n" +
		"master: a plain line\n"
	require.NoError(t, os.WriteFile(filepath.Join(dir, "master-1.log"), []byte(ref), 0o644))

	gs, err := Summarize(dir, started)
	require.NoError(t, err)
	require.Len(t, gs, 3)
	require.Equal(t, Group{Node: "master-0", Level: "WARN", Shape: "PutEnd: OpLog queue failed for key=…, err=-1002", Count: 3,
		First: int64(20270 * time.Millisecond), Last: int64(21230 * time.Millisecond),
		Example: "W1206 18:00:20.270000  4242 master_service.cpp:881] PutEnd: OpLog queue failed for key=g0-c1-000015, err=-1002"}, gs[0])
	// once each: the earlier first
	require.Equal(t, "master-1", gs[1].Node)
	require.Equal(t, "primary term ended", gs[1].Shape)
	require.Equal(t, int64(5*time.Second), gs[1].First)
	require.Equal(t, "master-0", gs[2].Node)
	require.Equal(t, "ERROR", gs[2].Level)
	require.Equal(t, "etcd txn failed: code=14", gs[2].Shape)
}
