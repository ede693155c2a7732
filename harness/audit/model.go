package audit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/oplogha/oplogha/impl/contract/metadata"

	"github.com/oplogha/oplogha/impl/contract/keyspace"

	"github.com/oplogha/oplogha/harness/client"
	"github.com/oplogha/oplogha/harness/model"
)

// The audits that decide whether data survived (durable-acknowledgement,
// recovered-state, convergence) judge a node against the harness's own
// model (harness/model): the durable history read from etcd's MVCC
// history, decoded through impl/contract and applied with upstream's
// applier rules, never against a node's account of itself.

// durableOf is the run's durable history: every move of the durable prefix
// in etcd's MVCC history, the revisions the harness wrote marked.
func durableOf(in *Input) (*model.Durable, error) {
	ks, err := keyspace.New(in.ClusterID)
	if err != nil {
		return nil, fmt.Errorf("cluster id: %w", err)
	}
	return model.ReadDurable(ks, in.Etcd, injectedRevisions(in.Events)), nil
}

// injectedRevisions are the etcd revisions the harness itself wrote.
func injectedRevisions(events []Event) map[int64]bool {
	out := map[int64]bool{}
	for _, e := range events {
		for _, rev := range e.Revisions {
			out[rev] = true
		}
	}
	return out
}

// modelStart is where the model starts a history that does not begin
// with an empty namespace (a legacy import): the content of the snapshot
// the import published, as the bundle kept it, when it is the fixture's
// (importStart). Without a kept copy such a state is unknown, and the
// audits say so.
func modelStart(in *Input) model.Start { return importStart(in) }

// errNoDurablePrefix: the bundle's etcd history never held a durable
// prefix (a run that failed before its cluster started, or a bundle
// without a history; keyspace-order fails it).
var errNoDurablePrefix = fmt.Errorf("%w: the etcd history holds no durable prefix", model.ErrUnknown)

// finalState is the model's state for the final durable prefix, or why it
// has none.
func finalState(in *Input) (model.Move, *model.State, error) {
	if len(in.Etcd) == 0 {
		return model.Move{}, nil, errNoDurablePrefix
	}
	d, err := durableOf(in)
	if err != nil {
		return model.Move{}, nil, err
	}
	final, ok := d.Final()
	if !ok {
		return model.Move{}, nil, errNoDurablePrefix
	}
	s, err := d.StateAt(final.Revision, modelStart(in))
	return final, s, err
}

// uuidText is a UUID as the master's contract writes it: "<first>-<second>".
func uuidText(u metadata.UUID) string {
	return strconv.FormatUint(u.First, 10) + "-" + strconv.FormatUint(u.Second, 10)
}

// contractObject is a model object as the master's contract shows it in a
// state dump (CONTRACT.md: GET /v1/state?dump=1): hard_pinned a bool and
// hard_pinned_unset for upstream's nullopt, a replica's client id only
// where it is set.
func contractObject(o model.Object) client.Object {
	out := client.Object{ClientID: uuidText(o.ClientID), Size: o.Size, GroupID: o.GroupID, DataType: uint32(o.DataType),
		HardPinned: o.HardPinned.Pinned(), HardPinnedUnset: o.HardPinned == model.PinUnset}
	for _, r := range o.Replicas {
		cr := client.Replica{ID: r.ID, Kind: r.Kind.String(), Segment: r.Endpoint, Offset: r.Offset, Length: r.Length,
			Status: model.StatusName(r.Status), Protocol: r.Protocol, FilePath: r.FilePath, AlignedSize: r.AlignedSize, ShardIdx: r.ShardIdx}
		if r.ClientID != (metadata.UUID{}) {
			cr.ClientID = uuidText(r.ClientID)
		}
		out.Replicas = append(out.Replicas, cr)
	}
	return out
}

func contractSegment(s model.Segment) client.Segment {
	return client.Segment{Endpoint: s.Endpoint, Name: s.Name, Capacity: s.Capacity, Kind: s.Kind(), FilePath: s.FilePath}
}

// objectDiff names the fields in which a node's object differs from the
// model's ("" when it does not).
func objectDiff(want, got client.Object) string {
	var diffs []string
	field := func(name string, w, g any) {
		if w != g {
			diffs = append(diffs, fmt.Sprintf("%s %v, the model %v", name, g, w))
		}
	}
	field("client_id", want.ClientID, got.ClientID)
	field("size", want.Size, got.Size)
	field("group_id", want.GroupID, got.GroupID)
	field("data_type", want.DataType, got.DataType)
	field("hard_pinned", want.HardPinned, got.HardPinned)
	field("hard_pinned_unset", want.HardPinnedUnset, got.HardPinnedUnset)
	if len(want.Replicas) != len(got.Replicas) {
		diffs = append(diffs, fmt.Sprintf("%d replicas, the model %d", len(got.Replicas), len(want.Replicas)))
	} else {
		for i := range want.Replicas {
			if want.Replicas[i] != got.Replicas[i] {
				diffs = append(diffs, fmt.Sprintf("replica %d %+v, the model %+v", i, got.Replicas[i], want.Replicas[i]))
			}
		}
	}
	return strings.Join(diffs, "; ")
}
