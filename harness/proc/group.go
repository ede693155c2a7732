package proc

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"syscall"
	"time"
)

// Group owns the processes of one run and stops them all on Close.
type Group struct {
	// Launcher, when set, starts every spec (containers); nil runs local
	// processes on 127.0.0.1.
	Launcher Launcher

	mu      sync.Mutex
	closing bool // Close has begun: nothing starts any more
	procs   map[string]*Process
	order   []string
	gone    []Record
}

// Record is what a Group remembers of a process for the bundle.
type Record struct {
	Name    string    `json:"name"`
	PID     int       `json:"pid"`
	Path    string    `json:"path"`
	Args    []string  `json:"args"`
	Log     string    `json:"log"`
	Started time.Time `json:"started"`
}

// ErrClosed is returned by Start once the group is closing.
var ErrClosed = errors.New("process group closed")

// NewGroup returns an empty group.
func NewGroup() *Group { return &Group{procs: map[string]*Process{}} }

// Start starts spec within the group; a running process of the same name is an error.
func (g *Group) Start(spec Spec) (*Process, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closing {
		return nil, fmt.Errorf("start %s: %w", spec.Name, ErrClosed)
	}
	if old, ok := g.procs[spec.Name]; ok && old.Running() {
		return nil, fmt.Errorf("start %s: already running as pid %d", spec.Name, old.PID)
	}
	var p *Process
	var err error
	if g.Launcher != nil {
		p, err = startInstance(g.Launcher, spec)
	} else {
		p, err = Start(spec)
	}
	if err != nil {
		return nil, err
	}
	if old, ok := g.procs[spec.Name]; ok {
		g.gone = append(g.gone, old.record())
	} else {
		g.order = append(g.order, spec.Name)
	}
	g.procs[spec.Name] = p
	return p, nil
}

func (p *Process) record() Record {
	return Record{Name: p.Name, PID: p.PID, Path: p.Path, Args: p.Args, Log: p.Log, Started: p.Started}
}

// Host is the address the node called name listens on: 127.0.0.1 for a
// local process, its own address on the run's network for a container.
func (g *Group) Host(name string) string {
	if g.Launcher != nil {
		return g.Launcher.Host(name)
	}
	return "127.0.0.1"
}

// Closing reports whether Close has begun: whoever watches the group's
// processes may stop.
func (g *Group) Closing() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closing
}

// Get returns the current process of that name.
func (g *Group) Get(name string) (*Process, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	p, ok := g.procs[name]
	return p, ok
}

// Records lists every process the group ever started, in start order.
func (g *Group) Records() []Record {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := append([]Record(nil), g.gone...)
	for _, n := range g.order {
		out = append(out, g.procs[n].record())
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Started.Before(out[j].Started) })
	return out
}

// Close stops every running process (SIGTERM, then SIGKILL after grace), in
// reverse start order, and then checks by PID that none is left.
func (g *Group) Close(grace time.Duration) error {
	g.mu.Lock()
	g.closing = true
	procs := make([]*Process, 0, len(g.order))
	for i := len(g.order) - 1; i >= 0; i-- {
		procs = append(procs, g.procs[g.order[i]])
	}
	g.mu.Unlock()
	var wg sync.WaitGroup
	errs := make([]error, len(procs))
	for i, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = p.Stop(grace)
		}()
	}
	wg.Wait()
	for _, p := range procs {
		if alive(p.PID) && p.Running() {
			errs = append(errs, fmt.Errorf("%s (pid %d) still alive after stop", p.Name, p.PID))
		}
	}
	if g.Launcher != nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		errs = append(errs, g.Launcher.Close(ctx))
	}
	return errors.Join(errs...)
}

// alive reports whether a process with pid exists (signal 0).
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }
