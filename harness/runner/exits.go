package runner

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/oplogha/oplogha/faults"
	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/proc"
)

// exitLogLines is how many of its last log lines an exit keeps.
const exitLogLines = 12

// armedPanics are the crash windows a scenario armed, by node: a master
// that exits there did what the scenario asked (a panic term). The exit
// watcher reads it from its own goroutine.
type armedPanics struct {
	mu    sync.Mutex
	nodes map[string]map[string]string // node → fault name → "failpoint=term"
}

func (a *armedPanics) arm(node, fault, what string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.nodes == nil {
		a.nodes = map[string]map[string]string{}
	}
	if a.nodes[node] == nil {
		a.nodes[node] = map[string]string{}
	}
	a.nodes[node][fault] = what
}

func (a *armedPanics) disarm(fault string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, m := range a.nodes {
		delete(m, fault)
	}
}

// on is what is armed on node ("": nothing).
func (a *armedPanics) on(node string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for _, what := range a.nodes[node] {
		out = append(out, what)
	}
	return strings.Join(out, ", ")
}

// notePanicArmed records a failpoint fault whose term crashes its node, and
// a heal's disarming of it.
func (r *run) notePanicArmed(name string, in *faults.Injected) {
	if in.Spec.Kind != "failpoint" || !strings.Contains(in.Spec.Term, "panic") || len(in.Targets) != 1 {
		return
	}
	r.panics.arm(in.Targets[0], name, in.Spec.Name+"="+in.Spec.Term)
}

// masterExited records a master's exit the harness did not ask for (the
// masters' OnExit): how it ended, after how long, its last log lines, and
// whether it was a crash window the scenario armed (a panic term on the
// node, or in cluster.failpoints) — every other exit is the master's own.
func (r *run) masterExited(node string, p *proc.Process) {
	armed := r.panics.on(node)
	for name, term := range r.sc.Cluster.Failpoints {
		if strings.Contains(term, "panic") {
			armed = strings.TrimPrefix(armed+", "+name+"="+term, ", ")
		}
	}
	if armed == "" && logHolds(p.Log, gofailPanic) {
		// The failpoint fired before the fault that armed it was recorded
		// (the node panicked on its next append, the arming call had not
		// returned yet): only the harness arms failpoints, and the node's
		// log names the failpoint panic.
		armed = "a failpoint panic the harness armed (its log: " + gofailPanic + ")"
	}
	e := audit.Event{Kind: "exit", Target: node, Name: audit.ExitOwn,
		Detail: fmt.Sprintf("%s, %v after its start (pid %d)", exitCause(p.ExitErr()), p.Exited().Sub(p.Started).Round(time.Millisecond), p.PID),
		Log:    lastLines(p.Log, exitLogLines)}
	if armed != "" {
		e.Name, e.OK = audit.ExitArmed, true
		e.Detail += "; armed: " + armed
	}
	r.events.push(e)
}

// gofailPanic is what a gofail panic term writes as the process dies.
const gofailPanic = "panic: failpoint panic"

// logHolds reports whether a line of the last 64 KiB of the file at path
// holds needle.
func logHolds(path, needle string) bool {
	return slices.ContainsFunc(lastLines(path, 1<<20), func(l string) bool { return strings.Contains(l, needle) })
}

// exitCause says how a process ended ("exit status 0" for nil).
func exitCause(err error) string {
	if err == nil {
		return "exit status 0"
	}
	return err.Error()
}

// lastLines are the last n non-empty lines of the file at path (read from
// its last 64 KiB).
func lastLines(path string, n int) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	const tail = 64 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		if _, err := f.Seek(fi.Size()-tail, io.SeekStart); err != nil {
			return nil
		}
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil
	}
	var out []string
	for _, l := range bytes.Split(data, []byte("\n")) {
		if l = bytes.TrimSpace(l); len(l) > 0 {
			out = append(out, string(l))
		}
	}
	if len(out) > n {
		out = out[len(out)-n:]
	}
	return out
}
