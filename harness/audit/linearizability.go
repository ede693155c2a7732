package audit

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/oplogha/oplogha/harness/history"
)

// objState is one key's state in the model: present with a size, or absent.
type objState struct {
	present bool
	size    uint64
}

// lop is a history op as the model sees it.
type lop struct {
	kind    string
	size    uint64
	outcome string // ok | unknown | exists | notfound
	found   bool
	gotSize uint64
}

// objectModel is a nondeterministic model of one key: an op of unknown
// outcome may or may not have taken effect.
var objectModel = porcupine.NondeterministicModel{
	Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var order []string
		for _, op := range ops {
			k := op.Metadata.(string)
			if _, ok := byKey[k]; !ok {
				order = append(order, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(order))
		for _, k := range order {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() []any { return []any{objState{}} },
	Step: func(state, input, output any) []any {
		s := state.(objState)
		in := input.(lop)
		out := output.(lop)
		switch in.kind {
		case history.Put:
			switch out.outcome {
			case "ok":
				if !s.present {
					return []any{objState{true, in.size}}
				}
			case "exists":
				if s.present {
					return []any{s}
				}
			case "unknown":
				if !s.present {
					return []any{s, objState{true, in.size}}
				}
				return []any{s}
			}
		case history.Remove:
			switch out.outcome {
			case "ok":
				if s.present {
					return []any{objState{}}
				}
			case "notfound":
				if !s.present {
					return []any{s}
				}
			case "unknown":
				return []any{s, objState{}}
			}
		case history.Get:
			if out.found == s.present && (!s.present || out.gotSize == s.size) {
				return []any{s}
			}
		}
		return nil
	},
	Equal: func(a, b any) bool { return a.(objState) == b.(objState) },
	DescribeOperation: func(input, output any) string {
		in, out := input.(lop), output.(lop)
		if in.kind == history.Get {
			return fmt.Sprintf("get → found=%v size=%d", out.found, out.gotSize)
		}
		return fmt.Sprintf("%s(size=%d) → %s", in.kind, in.size, out.outcome)
	},
	DescribeState: func(state any) string {
		s := state.(objState)
		if !s.present {
			return "absent"
		}
		return fmt.Sprintf("present(size=%d)", s.size)
	},
}

// toPorcupine turns the history into model operations. Definite failures
// other than "exists"/"not found" changed nothing and observed nothing, so
// they are left out; an unknown outcome never returns.
func toPorcupine(ops []history.Op) []porcupine.Operation {
	var out []porcupine.Operation
	for _, op := range ops {
		if op.Kind != history.Put && op.Kind != history.Remove && op.Kind != history.Get {
			continue
		}
		in := lop{kind: op.Kind, size: op.Size}
		res := lop{outcome: op.Outcome, found: op.Found, gotSize: op.GotSize}
		ret := op.Complete
		switch op.Outcome {
		case history.OK:
		case history.Unknown:
			if op.Kind == history.Get {
				continue
			}
			ret = math.MaxInt64
		case history.Failed:
			switch {
			case op.Kind == history.Put && op.Code == "object_exists":
				res.outcome = "exists"
			case op.Kind == history.Remove && op.Code == "object_not_found":
				res.outcome = "notfound"
			default:
				continue
			}
		default:
			continue
		}
		out = append(out, porcupine.Operation{ClientId: op.Client, Input: in, Call: op.Invoke, Output: res, Return: ret, Metadata: op.Tenant + "/" + op.Key})
	}
	return out
}

// finalReads adds, for every key the history touched, one read at the end
// of the run observing the serving node's final state: a write acknowledged
// and then lost must contradict something even if no client read the key
// again.
func finalReads(in *Input, ops []porcupine.Operation) []porcupine.Operation {
	var node *Node
	for i := range in.Nodes {
		n := &in.Nodes[i]
		if n.Running && n.State.Dump != nil && (node == nil || n.Health.Serving) {
			node = n
		}
	}
	if node == nil {
		return ops
	}
	var end int64
	reader := 0
	keys := map[string]bool{}
	for _, op := range ops {
		reader = max(reader, op.ClientId+1)
		if op.Return != math.MaxInt64 {
			end = max(end, op.Return)
		}
		end = max(end, op.Call)
		keys[op.Metadata.(string)] = true
	}
	present := map[string]uint64{}
	for _, o := range node.State.Dump {
		present[o.Tenant+"/"+o.Key] = o.Object.Size
	}
	for k := range keys {
		size, found := present[k]
		ops = append(ops, porcupine.Operation{ClientId: reader, Input: lop{kind: history.Get}, Call: end + 1, Return: end + 2,
			Output: lop{outcome: "ok", found: found, gotSize: size}, Metadata: k})
	}
	return ops
}

// LinearizabilityTimeout bounds the checker.
var LinearizabilityTimeout = 2 * time.Minute

// Linearizability checks the client history, closed by one final read per
// key of the serving node's state, against the per-key model.
func Linearizability(in *Input) Result {
	ops := finalReads(in, toPorcupine(in.Ops))
	model := objectModel.ToModel()
	res, info := porcupine.CheckOperationsVerbose(model, ops, LinearizabilityTimeout)
	summary := fmt.Sprintf("%d operations on %d keys", len(ops), len(model.Partition(ops)))
	switch res {
	case porcupine.Ok:
		return Result{Pass: true, Summary: summary + ": linearizable", Exercised: map[string]int{"linearizable": len(ops)}}
	case porcupine.Unknown:
		return Result{Pass: false, Summary: summary + ": checker timed out after " + LinearizabilityTimeout.String(),
			Evidence: []string{"inconclusive: treat as a failure and shrink the run"}}
	}
	var ev evidence
	parts := model.Partition(ops)
	for i, partial := range info.PartialLinearizationsOperations() {
		if i >= len(parts) {
			break
		}
		longest := 0
		for _, l := range partial {
			longest = max(longest, len(l))
		}
		if longest >= len(parts[i]) {
			continue // this key linearizes
		}
		ev.add("key %s: only %d of its %d ops linearize; its history: %s", parts[i][0].Metadata, longest, len(parts[i]), describeOps(model, parts[i]))
	}
	return Result{Pass: false, Summary: summary + ": NOT linearizable", Evidence: ev.list()}
}

// describeOps lists a key's ops in call order, compactly.
func describeOps(model porcupine.Model, ops []porcupine.Operation) string {
	var parts []string
	for i, op := range ops {
		if i == 8 {
			parts = append(parts, fmt.Sprintf("… %d more", len(ops)-i))
			break
		}
		ret := "never"
		if op.Return != math.MaxInt64 {
			ret = seconds(op.Return)
		}
		parts = append(parts, fmt.Sprintf("[%s–%s c%d %s]", seconds(op.Call), ret, op.ClientId, model.DescribeOperation(op.Input, op.Output)))
	}
	return strings.Join(parts, " ")
}

// VisualizeLinearizability writes porcupine's interactive HTML for the history.
func VisualizeLinearizability(in *Input, path string) error {
	ops := finalReads(in, toPorcupine(in.Ops))
	model := objectModel.ToModel()
	_, info := porcupine.CheckOperationsVerbose(model, ops, LinearizabilityTimeout)
	return porcupine.VisualizePath(model, info, path)
}
