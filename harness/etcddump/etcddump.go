// Package etcddump reads a cluster's namespace out of etcd for the bundle:
// the final keys (prefix, view, floor, pointers, batch range) and the whole
// MVCC history of the namespace since revision 1, which the keyspace-order
// audit replays. A run must not compact etcd before this is read.
package etcddump

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/oplogha/oplogha/impl/contract/keyspace"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Event is one MVCC change to a key of the namespace.
type Event struct {
	Revision       int64  `json:"rev"`
	Type           string `json:"type"` // put | delete
	Key            string `json:"key"`
	Value          []byte `json:"value,omitempty"`
	CreateRevision int64  `json:"create_rev"`
	Version        int64  `json:"version"`
	Lease          int64  `json:"lease,omitempty"` // the lease a put attached the key to
}

// Final is the namespace as it stands at the end of a run.
type Final struct {
	Revision      int64             `json:"revision"`
	Keys          map[string]string `json:"keys"` // every non-batch key and its value
	BatchCount    int64             `json:"batch_count"`
	FirstBatchKey string            `json:"first_batch_key,omitempty"`
	LastBatchKey  string            `json:"last_batch_key,omitempty"`
}

// ReadFinal reads the final keys.
func ReadFinal(ctx context.Context, cli *clientv3.Client, ks keyspace.Keyspace) (Final, error) {
	resp, err := cli.Get(ctx, ks.Root()+"/", clientv3.WithPrefix())
	if err != nil {
		return Final{}, fmt.Errorf("read namespace: %w", err)
	}
	f := Final{Revision: resp.Header.Revision, Keys: map[string]string{}}
	for _, kv := range resp.Kvs {
		k := string(kv.Key)
		if _, ok := ks.ParseBatch(k); ok {
			f.BatchCount++
			if f.FirstBatchKey == "" {
				f.FirstBatchKey = k
			}
			f.LastBatchKey = k
			continue
		}
		f.Keys[k] = string(kv.Value)
	}
	return f, nil
}

// ReadHistory replays every event of the namespace from revision from
// (1 for the whole history) through upto and writes them to w as JSON lines;
// it returns the count. Reading in segments lets a run keep the history it
// is about to compact away: segment [1, R] before compacting at R, then
// [R+1, end] at the end.
func ReadHistory(ctx context.Context, cli *clientv3.Client, ks keyspace.Keyspace, from, upto int64, w io.Writer) (int, error) {
	from = max(from, 1)
	if upto < from {
		return 0, nil
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	n := 0
	// A synced watcher answers progress requests with its revision: that is
	// how the replay knows it has seen everything through upto.
	go func() {
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
				_ = cli.RequestProgress(wctx)
			}
		}
	}()
	next, retries := from, 0
watch:
	for wr := range cli.Watch(wctx, ks.Root()+"/", clientv3.WithPrefix(), clientv3.WithRev(next)) {
		if err := wr.Err(); err != nil {
			// An authenticated client's token can expire or be refused by
			// the member the stream lands on; unary calls refresh it by
			// themselves, a watch does not. A read refreshes it, and the
			// watch resumes after the last event written.
			if retries < 3 && strings.Contains(err.Error(), "invalid auth token") {
				retries++
				_, _ = cli.Get(wctx, ks.DurablePrefix())
				goto watch
			}
			return n, fmt.Errorf("watch history: %w", err)
		}
		for _, ev := range wr.Events {
			if ev.Kv.ModRevision > upto {
				continue // the next segment's
			}
			e := Event{Revision: ev.Kv.ModRevision, Key: string(ev.Kv.Key), CreateRevision: ev.Kv.CreateRevision, Version: ev.Kv.Version, Type: "put"}
			if ev.Type == clientv3.EventTypeDelete {
				e.Type = "delete"
			} else {
				e.Value, e.Lease = ev.Kv.Value, ev.Kv.Lease
			}
			if err := enc.Encode(e); err != nil {
				return n, err
			}
			n++
			next = ev.Kv.ModRevision + 1
		}
		if wr.IsProgressNotify() && wr.Header.Revision >= upto {
			return n, bw.Flush()
		}
		if len(wr.Events) > 0 && wr.Events[len(wr.Events)-1].Kv.ModRevision >= upto {
			return n, bw.Flush()
		}
	}
	if err := ctx.Err(); err != nil {
		return n, fmt.Errorf("watch history: %w", err)
	}
	return n, bw.Flush()
}

// ReadHistoryFile reads events written by ReadHistory.
func ReadHistoryFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Event
	dec := json.NewDecoder(bufio.NewReader(f))
	for {
		var e Event
		if err := dec.Decode(&e); err == io.EOF {
			return out, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: event %d: %w", path, len(out)+1, err)
		}
		out = append(out, e)
	}
}
