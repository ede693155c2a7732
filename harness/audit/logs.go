package audit

import (
	"encoding/base64"
	"fmt"
	"github.com/oplogha/oplogha/harness/history"

	"github.com/oplogha/oplogha/impl/contract/batchlog"
	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"github.com/oplogha/oplogha/harness/leak"
)

// LogsDir is where a bundle keeps every process log (bundle.LogsDir).
const LogsDir = "logs"

// LogAudit reads every file of the bundle for the run's secrets (by their
// salted hashes), private keys and signed S3 requests, and every process
// log for client data: the tenant keys the history names and the payloads
// of the batches etcd held. It runs on every bundle, whatever the scenario
// asks, and fails a bundle that cannot say which secrets to look for.
func LogAudit(in *Input) Result {
	if in.Dir == "" {
		return Result{Summary: "no bundle directory to read"}
	}
	if in.Secrets == nil {
		return Result{Summary: "the bundle has no secrets.json: the run's secrets cannot be looked for"}
	}
	var needles leak.Needles
	for _, op := range in.Ops {
		switch {
		case op.Key == "":
		case op.Kind == history.Mount:
			needles.Add(op.Key, fmt.Sprintf("segment name %q (op %d)", op.Key, op.ID))
		default:
			needles.Add(op.Key, fmt.Sprintf("tenant key %q (op %d)", op.Key, op.ID))
		}
	}
	payloads := 0
	if ks, err := keyspace.New(in.ClusterID); err == nil {
		for _, e := range in.Etcd {
			if _, ok := ks.ParseBatch(e.Key); !ok || len(e.Value) == 0 {
				continue
			}
			b, err := batchlog.DecodeBatch(e.Value)
			if err != nil {
				continue
			}
			for _, en := range b.Entries {
				if len(en.Payload) > 0 {
					needles.Add(base64.StdEncoding.EncodeToString(en.Payload), fmt.Sprintf("payload of batch %d (%s %s)", b.ID, en.Tenant, en.Key))
					payloads++
				}
			}
		}
	}
	found, files, err := leak.Scan(in.Dir, *in.Secrets, &needles, LogsDir)
	var ev evidence
	for _, f := range found {
		ev.add("%s", f)
	}
	if err != nil {
		ev.add("scan: %v", err)
	}
	sum := fmt.Sprintf("%d files read for %d secrets, private keys and signed URLs; process logs for %d client keys and payloads (%d payloads)",
		files, len(in.Secrets.Hashed), needles.Len(), payloads)
	if !ev.empty() {
		return Result{Summary: fmt.Sprintf("%d leak(s) in %s", len(found), sum), Evidence: ev.list()}
	}
	return Result{Pass: true, Summary: "nothing leaked: " + sum}
}
