package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFailuresGroupBySignature: runs that share a finding are one row
// with their count (a run under each of its findings), the most frequent
// first, in signatures.md.
func TestFailuresGroupBySignature(t *testing.T) {
	runs := []failedRun{{"swarm-1-004", "/b/4.tar.gz"}, {"swarm-1-001", "/b/1.tar.gz"}, {"swarm-1-002", "/b/2.tar.gz"}, {"swarm-1-003", "/b/3.tar.gz"}}
	sigs := []string{"durable-acknowledgement [deposed-append] · log-audit", "process-exits crash loop (signal: aborted)",
		"durable-acknowledgement [deposed-append] · log-audit", ""}
	groups := groupBySignature(runs, sigs)
	require.Len(t, groups, 4)
	require.Equal(t, "durable-acknowledgement [deposed-append]", groups[0].signature)
	require.Equal(t, []failedRun{{"swarm-1-002", "/b/2.tar.gz"}, {"swarm-1-004", "/b/4.tar.gz"}}, groups[0].runs, "a group's runs in name order")
	require.Equal(t, "log-audit", groups[1].signature)
	require.Equal(t, "failed without a failing audit", groups[2].signature)
	groups[0].shrunk, groups[0].replay = "/s/swarm-1-002-shrunk.yaml", "reproduced — /s/r.tar.gz"

	path := filepath.Join(t.TempDir(), "out", "signatures.md")
	require.NoError(t, writeSignatures(path, "Swarm seed 1", 10, groups))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	md := string(data)
	require.Contains(t, md, "10 runs, 4 failed, 4 findings")
	require.Contains(t, md, "| 1 | durable-acknowledgement [deposed-append] | 2 (swarm-1-002 swarm-1-004) | 2.tar.gz | "+
		"/s/swarm-1-002-shrunk.yaml | reproduced — /s/r.tar.gz |")
}

// TestSignaturesNeedsBundles: a directory without bundles is an error that
// says so, not an empty table.
func TestSignaturesNeedsBundles(t *testing.T) {
	dir := t.TempDir()
	err := cmdSignatures(context.Background(), []string{dir})
	require.ErrorContains(t, err, "no bundles")
	require.ErrorContains(t, cmdSignatures(context.Background(), nil), "takes directories")
}
