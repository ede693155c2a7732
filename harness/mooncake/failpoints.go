package mooncake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/oplogha/oplogha/harness/masterkind"
	"github.com/oplogha/oplogha/harness/masters"
)

// Upstream's test failpoints are files in the node's failpoint directory:
// the harness creates <name>.arm; the first thread to reach the point
// renames it to <name>.claimed.<pid>, writes <name>.hit (its pid) and
// waits until <name>.release exists, then removes all three. A failpoint
// fires once per arm and can only hold. So a scenario's hold term is an
// arm, its heal a release, and its panic term an arm whose hit the driver
// answers with SIGKILL: a crash at the point, with nothing after it run.

// ErrTerm: a term upstream's failpoints cannot express.
var ErrTerm = errors.New("mooncake failpoints hold or crash once")

// ownName is upstream's name for the scenario's failpoint name.
func ownName(name string) (string, error) {
	own, ok := masterkind.Mooncake().Failpoint(name)
	if !ok {
		return "", fmt.Errorf("master mooncake has no failpoint %s", name)
	}
	return own, nil
}

// ownTerm checks a term: hold or panic, at most once ("1*" or no count).
func ownTerm(term string) (form string, err error) {
	form = masterkind.TermForm(term)
	if form != "hold" && form != "panic" {
		return "", fmt.Errorf("%w: term %q is %s", ErrTerm, term, form)
	}
	if count, _, ok := strings.Cut(term, "*"); ok && count != "1" {
		return "", fmt.Errorf("%w: term %q fires %s times", ErrTerm, term, count)
	}
	return form, nil
}

// writeAtomic writes a file under a temporary name and renames it, so the
// master never sees it half written.
func writeAtomic(path, content string) error {
	tmp := path + ".tmp.harness"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Failpoint arms (hold, panic) or releases ("") a failpoint on n.
func (d *Driver) Failpoint(ctx context.Context, n *masters.Node, name, term string) error {
	st, err := d.node(n)
	if err != nil {
		return err
	}
	own, err := ownName(name)
	if err != nil {
		return err
	}
	base := filepath.Join(st.fpDir, own)
	if term == "" {
		d.mu.Lock()
		if stop, ok := st.crash[own]; ok {
			close(stop)
			delete(st.crash, own)
		}
		d.mu.Unlock()
		_ = os.Remove(base + ".arm") // not reached yet: disarm
		return writeAtomic(base+".release", "")
	}
	form, err := ownTerm(term)
	if err != nil {
		return err
	}
	return d.arm(n, st, own, form)
}

// arm creates the arm file and, for a crash, the watcher that kills the
// node at its hit.
func (d *Driver) arm(n *masters.Node, st *nodeState, own, form string) error {
	base := filepath.Join(st.fpDir, own)
	// What an earlier process left (it was killed while held) is not this arm's hit.
	stale, _ := filepath.Glob(base + ".claimed.*")
	for _, f := range append(stale, base+".release", base+".hit") {
		_ = os.Remove(f)
	}
	d.mu.Lock()
	st.hits[own] = 0
	d.mu.Unlock()
	if err := writeAtomic(base+".arm", ""); err != nil {
		return err
	}
	if form == "panic" {
		stop := make(chan struct{})
		d.mu.Lock()
		if old, ok := st.crash[own]; ok {
			close(old)
		}
		st.crash[own] = stop
		d.mu.Unlock()
		go d.crashAtHit(n, st, own, stop)
	}
	return nil
}

// crashAtHit waits for the failpoint's hit and SIGKILLs the process that
// holds there (checked by the pid the master wrote), until the failpoint
// is cleared or the process it was armed for exits.
func (d *Driver) crashAtHit(n *masters.Node, st *nodeState, own string, stop chan struct{}) {
	p, ok := d.Group.Get(n.Name)
	if !ok {
		return
	}
	hit := filepath.Join(st.fpDir, own+".hit")
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-p.Done():
			return
		case <-t.C:
		}
		data, err := os.ReadFile(hit)
		if err != nil {
			continue
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid == p.PID {
			d.mu.Lock()
			st.hits[own]++
			d.mu.Unlock()
			_ = p.Kill()
			_ = os.Remove(hit)
			return
		}
	}
}

// FailpointHits is 1 once the failpoint armed last has been reached (a
// hit file, or its claim, exists or existed), else 0.
func (d *Driver) FailpointHits(ctx context.Context, n *masters.Node, name string) (int, error) {
	st, err := d.node(n)
	if err != nil {
		return 0, err
	}
	own, err := ownName(name)
	if err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if st.hits[own] == 0 {
		if _, err := os.Stat(filepath.Join(st.fpDir, own+".hit")); err == nil {
			st.hits[own] = 1
		}
	}
	return st.hits[own], nil
}

// StartFailpoints arms the failpoints a node starts with.
func (d *Driver) StartFailpoints(n *masters.Node, fps map[string]string) ([]string, error) {
	if len(fps) == 0 {
		return nil, nil
	}
	st, err := d.node(n)
	if err != nil {
		return nil, err
	}
	for name, term := range fps {
		own, err := ownName(name)
		if err != nil {
			return nil, err
		}
		form, err := ownTerm(term)
		if err != nil {
			return nil, err
		}
		if form == "panic" {
			return nil, fmt.Errorf("%w: a crash armed at start needs the running process", ErrTerm)
		}
		if err := d.arm(n, st, own, form); err != nil {
			return nil, err
		}
	}
	return nil, nil
}
