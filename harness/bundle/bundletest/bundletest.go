// Package bundletest writes small hand-made bundles for the tests of the
// code that reads and renders them: a run of 26 seconds whose cluster is
// healthy at 12 s and whose evidence is collected at 23.5 s, with steps, a fault and its heal, role changes, snapshot
// publications, client ops, retention samples and audit verdicts, laid out
// on disk as the runner lays out a real bundle, so bundle.Open reads it.
package bundletest

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/bundle"
	"github.com/oplogha/oplogha/harness/etcddump"
	"github.com/oplogha/oplogha/harness/history"
)

// Boot is when the fixture's cluster is healthy (its "boot" note), and
// Collect when the harness starts reading the evidence (its last event;
// the run then takes until 26 s to read etcd and stop its processes).
const (
	Boot    = 12 * time.Second
	Collect = 23500 * time.Millisecond
)

// Run is what a fixture bundle records. Small gives a complete one; a test
// blanks or changes parts of it to make a broken one.
type Run struct {
	Meta      bundle.Meta
	Events    []audit.Event
	Ops       []history.Op
	Retention []audit.RetentionSample
	Nodes     []audit.Node
	Results   []audit.Result
}

// scenarioYAML is the fixture's scenario: valid, so bundle.Open loads it.
const scenarioYAML = `name: fixture
description: a hand-made bundle for the report's tests
tier: harness-test
seed: 7
cluster:
  etcd: 1
  masters: 2
traffic:
  clients: 1
  rate: 50
  max_ops: 200
  duration: 1m
steps:
  - wait: {for: ops, ops: 50}
  - fault: {kind: kill, target: primary}
    as: victim
  - wait: {for: primary, excluding: victim, timeout: 30s}
  - heal: victim
expect:
  min_ok_ops: 50
`

func at(d time.Duration) int64 { return int64(d) }

// Small is a complete, passing run of two masters.
func Small() Run {
	s := time.Second
	r := Run{
		Meta: bundle.Meta{Scenario: "fixture", Tier: "harness-test", Seed: 7, Runtime: "process", ClusterID: "fixture",
			Started: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), DurationMS: (26 * s).Milliseconds(), BootMS: 2100, Pass: true,
			Binaries: []bundle.Binary{{Name: "etcd", Version: "v3.7.3", SHA256: "00ff"}},
			Steps: []bundle.StepTiming{
				{Index: 1, Label: "wait ops 50", Line: 13, StartNS: at(12500 * time.Millisecond), EndNS: at(14 * s), OK: true},
				{Index: 2, Label: "fault kill primary as victim", Line: 14, StartNS: at(14 * s), EndNS: at(14100 * time.Millisecond), OK: true},
				{Index: 3, Label: "wait primary excluding victim", Line: 16, StartNS: at(14100 * time.Millisecond), EndNS: at(17 * s), OK: true},
				{Index: 4, Label: "heal victim", Line: 17, StartNS: at(19 * s), EndNS: at(20 * s), OK: true},
			}},
		Events: []audit.Event{
			{At: at(Boot), Kind: "note", Name: bundle.BootNote, Detail: "cluster healthy in 2.1s", OK: true},
			{At: at(Boot + 100*time.Millisecond), Kind: "role", Target: "master-0", Detail: "starting → primary", OK: true},
			{At: at(Boot + 100*time.Millisecond), Kind: "role", Target: "master-1", Detail: "starting → standby", OK: true},
			{At: at(13 * s), Kind: "snapshot", Detail: "snapshot 1 by master-1", OK: true},
			{At: at(14 * s), Kind: "fault", Name: "kill", Target: "master-0", Detail: "victim", OK: true},
			{At: at(14 * s), Kind: "role", Target: "master-0", Detail: "primary → down", OK: true},
			{At: at(15 * s), Kind: "role", Target: "master-1", Detail: "standby → promoting", OK: true},
			{At: at(16 * s), Kind: "role", Target: "master-1", Detail: "promoting → primary", OK: true},
			{At: at(19 * s), Kind: "heal", Name: "kill", Target: "master-0", Detail: "victim", OK: true},
			{At: at(20 * s), Kind: "role", Target: "master-0", Detail: "down → standby", OK: true},
			{At: at(21 * s), Kind: "snapshot", Detail: "snapshot 2 by master-0", OK: true},
			{At: at(Collect), Kind: "note", Name: "collect", Detail: "masters frozen while etcd and the object store are read", OK: true},
		},
		Nodes: []audit.Node{{Name: "master-0", Running: true}, {Name: "master-1", Running: true}},
		Results: []audit.Result{
			{Name: "acknowledged-data", Pass: true, Summary: "every acknowledged write is in the final state"},
			{Name: "linearizability", Pass: true, Summary: "history linearizable"},
			{Name: "promotions", Pass: true, Summary: "2 promotions", Evidence: []string{"master-1 primary at 16.0s"}},
		},
	}
	for i := range 200 {
		done := Boot + time.Second + time.Duration(i)*50*time.Millisecond
		op := history.Op{ID: int64(i + 1), Kind: history.Put, Key: fmt.Sprintf("k%03d", i), Node: "master-0",
			Invoke: at(done - 5*time.Millisecond), Complete: at(done), Outcome: history.OK}
		if done > 14*s && done < 16*s {
			op.Outcome = history.Failed
		}
		r.Ops = append(r.Ops, op)
	}
	for i := range 12 {
		r.Retention = append(r.Retention, audit.RetentionSample{At: at(Boot + time.Duration(i)*time.Second),
			Floor: uint64(i / 4), BatchKeys: 10 + i, Groups: 1 + i/6, DBSize: int64(1+i) << 20})
	}
	return r
}

// Write lays r out as a bundle directory dir/fixture and returns its path.
func (r Run) Write(dir string) (string, error) {
	path := filepath.Join(dir, "fixture")
	if err := os.MkdirAll(filepath.Join(path, "etcd"), 0o755); err != nil {
		return "", fmt.Errorf("fixture: %w", err)
	}
	files := []struct {
		name string
		data []byte
	}{
		{bundle.ScenarioFile, []byte(scenarioYAML)},
		{bundle.EtcdHistoryFile, nil},
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(path, f.name), f.data, 0o644); err != nil {
			return "", fmt.Errorf("fixture: %w", err)
		}
	}
	steps := []func() error{
		func() error { return bundle.WriteJSON(path, bundle.MetaFile, r.Meta) },
		func() error { return bundle.WriteJSON(path, bundle.EtcdFinalFile, etcddump.Final{Revision: 42}) },
		func() error { return bundle.WriteEvents(path, r.Events) },
		func() error { return bundle.WriteRetention(path, r.Retention) },
		func() error { return history.WriteFile(filepath.Join(path, bundle.HistoryFile), r.Ops) },
		func() error {
			rec := bundle.AuditRecord{Scenario: r.Meta.Scenario, Seed: r.Meta.Seed, Pass: audit.Passed(r.Results), Results: r.Results}
			return bundle.WriteJSON(path, bundle.AuditFile, rec)
		},
	}
	for _, n := range r.Nodes {
		steps = append(steps, func() error { return bundle.WriteJSON(filepath.Join(path, bundle.NodesDir), n.Name+".json", n) })
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return "", fmt.Errorf("fixture: %w", err)
		}
	}
	return path, nil
}
