// Package history records every client operation of a run — invoke and
// complete times, target node and outcome (ok, failed, unknown) — and
// reads it back from a bundle, for the audits.
package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Op kinds.
const (
	Put    = "put"
	Remove = "remove"
	Get    = "get"
	Mount  = "mount"
)

// Outcomes, as the client API reports them; a transport error is Unknown.
const (
	OK      = "ok"
	Failed  = "failed"
	Unknown = "unknown"
)

// Op is one client operation.
type Op struct {
	ID       int64  `json:"id"`
	Client   int    `json:"client"`
	Kind     string `json:"kind"`
	Tenant   string `json:"tenant,omitempty"`
	Key      string `json:"key"`
	Size     uint64 `json:"size,omitempty"`
	Node     string `json:"node"`
	Invoke   int64  `json:"invoke_ns"`   // since the run's start
	Complete int64  `json:"complete_ns"` // since the run's start
	Outcome  string `json:"outcome"`
	Code     string `json:"code,omitempty"`
	BatchID  uint64 `json:"batch_id,omitempty"`
	Seq      uint64 `json:"seq,omitempty"`
	Found    bool   `json:"found,omitempty"`    // get: the object exists
	GotSize  uint64 `json:"got_size,omitempty"` // get: its size
	Reput    bool   `json:"reput,omitempty"`    // put: of a key already acknowledged (expected: object_exists)
}

// Recorder collects ops from concurrent clients.
type Recorder struct {
	start time.Time
	mu    sync.Mutex
	ops   []Op
	next  int64
	ok    atomic.Int64
}

// NewRecorder starts the run's clock at start.
func NewRecorder(start time.Time) *Recorder { return &Recorder{start: start} }

// Now is the run clock (monotonic).
func (r *Recorder) Now() int64 { return int64(time.Since(r.start)) }

// Add appends a completed op and returns its id.
func (r *Recorder) Add(op Op) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.next++
	op.ID = r.next
	if op.Outcome == OK {
		r.ok.Add(1)
	}
	r.ops = append(r.ops, op)
	return op.ID
}

// OKCount is the number of ops recorded with outcome ok.
func (r *Recorder) OKCount() int64 { return r.ok.Load() }

// Ops returns a copy of the ops in invoke order.
func (r *Recorder) Ops() []Op {
	r.mu.Lock()
	out := append([]Op(nil), r.ops...)
	r.mu.Unlock()
	sort.SliceStable(out, func(i, j int) bool { return out[i].Invoke < out[j].Invoke })
	return out
}

// Counts tallies ops by outcome.
func Counts(ops []Op) map[string]int {
	c := map[string]int{}
	for _, o := range ops {
		c[o.Outcome]++
	}
	return c
}

// Write writes ops as JSON lines.
func Write(w io.Writer, ops []Op) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for _, o := range ops {
		if err := enc.Encode(o); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// WriteFile writes ops to path.
func WriteFile(path string, ops []Op) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := Write(f, ops); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// ReadFile reads ops from a JSON-lines file.
func ReadFile(path string) ([]Op, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ops []Op
	dec := json.NewDecoder(bufio.NewReader(f))
	for {
		var o Op
		if err := dec.Decode(&o); err == io.EOF {
			return ops, nil
		} else if err != nil {
			return nil, fmt.Errorf("%s: op %d: %w", path, len(ops)+1, err)
		}
		ops = append(ops, o)
	}
}
