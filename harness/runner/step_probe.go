package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/history"
	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/scenario"
	"github.com/oplogha/oplogha/harness/traffic"
)

// probeClient is the client id of probe ops in the history: apart from
// the load's clients (0..clients-1), one sequential client.
const probeClient = 1 << 20

// probeOpTimeout bounds each probe op: a node that answers nothing
// (paused, cut off) costs the step this much per key, no more.
const probeOpTimeout = 5 * time.Second

// probe puts fresh keys at the serving primary other than the probed node
// (its successor), then reads each at the probed node, one op after
// another, every op recorded in the client history with the node it went
// to: a deposed primary's answers are then judged by the audits like any
// client's (a read sent after the put was acknowledged must find the key).
func (r *run) probe(ctx context.Context, p *scenario.Probe) error {
	node := p.Node
	if n, ok := r.nodeOf(p.Node); ok {
		node = n
	}
	var at, successor, successorURL string
	hs := r.cluster.Masters.Health(ctx)
	for i, n := range r.cluster.Masters.Nodes {
		switch {
		case n.Name == node:
			at = n.URL
		case hs[i].Serving && hs[i].Role == "primary" && successor == "":
			successor, successorURL = n.Name, n.URL
		}
	}
	if at == "" {
		return fmt.Errorf("probe: no master %q", p.Node)
	}
	if successor == "" {
		return fmt.Errorf("probe: no serving primary other than %s to write at", node)
	}
	keys := p.Keys
	if keys == 0 {
		keys = 20
	}
	tenant := "tenant-0"
	if !r.kind.Can(masterkind.Tenants) {
		tenant = "default" // as the load's one tenant for such a kind
	}
	r.probes++
	written, served, refused := 0, 0, 0
	for i := range keys {
		key := fmt.Sprintf("probe%d-%06d", r.probes, i)
		put := history.Op{Client: probeClient, Kind: history.Put, Tenant: tenant, Key: key, Size: 4096, Node: successor, Invoke: r.rec.Now()}
		pctx, cancel := context.WithTimeout(ctx, probeOpTimeout)
		res := r.client.Put(pctx, successorURL, client.PutRequest{Tenant: tenant, Key: key, ClientID: fmt.Sprintf("0-%d", probeClient), Size: put.Size})
		cancel()
		traffic.FillMutation(&put, res)
		put.Complete = r.rec.Now()
		r.rec.Add(put)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if put.Outcome != history.OK {
			continue // only an acknowledged put makes the read a question
		}
		written++
		get := history.Op{Client: probeClient, Kind: history.Get, Tenant: tenant, Key: key, Node: node, Invoke: r.rec.Now()}
		gctx, cancel := context.WithTimeout(ctx, probeOpTimeout)
		obj, found, err := r.client.Get(gctx, at, tenant, key)
		cancel()
		traffic.FillRead(&get, obj, found, err)
		if get.Outcome == history.OK {
			served++
		} else {
			refused++
		}
		get.Complete = r.rec.Now()
		r.rec.Add(get)
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	r.events.add("note", "probe", node, fmt.Sprintf("%d keys put at %s (%d acknowledged), each then read at %s: %d served, %d refused",
		keys, successor, written, node, served, refused), true)
	if written == 0 {
		return errors.New("probe: the successor acknowledged none of the probe's puts")
	}
	return nil
}
