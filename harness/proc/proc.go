// Package proc starts and stops the harness's child processes. Every process
// has a recorded PID, its output in a log file, and is stopped by that PID;
// a Group stops all of its processes on Close, and the kernel kills them if
// the harness itself dies (Pdeathsig), so a failed or panicking run leaves
// nothing behind.
package proc

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// Spec describes a process to start.
type Spec struct {
	Name string   // unique within a Group, e.g. "etcd-0"
	Path string   // binary
	Args []string // arguments
	Env  []string // extra environment (KEY=VALUE), added to a minimal base
	Dir  string   // working directory
	Log  string   // file receiving stdout and stderr (appended)
}

// Process is a started child.
type Process struct {
	Spec
	PID     int
	Started time.Time

	cmd    *exec.Cmd
	inst   Instance // set when a Launcher started it (a container)
	done   chan struct{}
	mu     sync.Mutex
	err    error // from Wait
	exited time.Time
	paused bool
	// ended: the harness asked the process to end (Kill, Stop), so its
	// exit is the harness's doing, not the process's own.
	ended bool
}

// Start starts spec. The process gets a new process group so signals to the
// harness's terminal do not reach it, and SIGKILL if the harness dies.
func Start(spec Spec) (*Process, error) {
	if spec.Log == "" {
		return nil, fmt.Errorf("start %s: no log file", spec.Name)
	}
	logf, err := os.OpenFile(spec.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	cmd := exec.Command(spec.Path, spec.Args...)
	cmd.Dir = spec.Dir
	cmd.Env = append(baseEnv(), spec.Env...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("start %s (%s): %w", spec.Name, spec.Path, err)
	}
	p := &Process{Spec: spec, PID: cmd.Process.Pid, Started: time.Now(), cmd: cmd, done: make(chan struct{})}
	go func() {
		err := cmd.Wait()
		logf.Close()
		p.mu.Lock()
		p.err, p.exited = err, time.Now()
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// baseEnv passes through only what programs need to run; nothing secret
// from the harness's environment leaks into a child by default.
func baseEnv() []string {
	var env []string
	for _, k := range []string{"PATH", "HOME", "TMPDIR", "LANG", "TZ"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// Done is closed when the process has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Running reports whether the process has not exited.
func (p *Process) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Paused reports whether the process is running but stopped by Pause.
func (p *Process) Paused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused && p.Running()
}

// ExitErr is the process's wait error once it has exited (nil for exit 0).
func (p *Process) ExitErr() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.err
}

// Signal sends sig to the process by its PID (not its group). A child is
// signalled through its os.Process (a pidfd: never a later process that
// reused the PID); a process that exited between the check and the signal —
// reaped, its Done not yet closed — is ErrExited, as one that had exited
// before.
func (p *Process) Signal(sig syscall.Signal) error {
	if !p.Running() {
		return fmt.Errorf("%s (pid %d): %w", p.Name, p.PID, ErrExited)
	}
	var err error
	if p.cmd != nil && p.cmd.Process != nil {
		err = p.cmd.Process.Signal(sig)
	} else {
		err = syscall.Kill(p.PID, sig)
	}
	switch {
	case err == nil:
		return nil
	case errors.Is(err, os.ErrProcessDone), errors.Is(err, syscall.ESRCH):
		return fmt.Errorf("signal %v to %s (pid %d): %w", sig, p.Name, p.PID, ErrExited)
	default:
		return fmt.Errorf("signal %v to %s (pid %d): %w", sig, p.Name, p.PID, err)
	}
}

// ErrExited: the process is no longer running.
var ErrExited = errors.New("process has exited")

// EndedByHarness reports whether the harness asked the process to end
// (Kill, Stop): an exit after that is the harness's doing.
func (p *Process) EndedByHarness() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ended
}

func (p *Process) markEnded() {
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
}

// Exited is when the process exited (zero while it runs).
func (p *Process) Exited() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exited
}

// Kill sends SIGKILL and waits for the exit.
func (p *Process) Kill() error {
	p.markEnded()
	p.resumeIfPaused()
	if err := p.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, ErrExited) {
		return err
	}
	<-p.done
	return nil
}

// Pause stops the process with SIGSTOP — a container is frozen whole
// (docker pause) — and Resume continues it.
func (p *Process) Pause() error {
	if !p.Running() {
		return fmt.Errorf("%s (pid %d): %w", p.Name, p.PID, ErrExited)
	}
	var err error
	if p.inst != nil {
		err = p.inst.Pause()
	} else {
		err = p.Signal(syscall.SIGSTOP)
	}
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.paused = true
	p.mu.Unlock()
	return nil
}

// Resume sends SIGCONT (a container: docker unpause).
func (p *Process) Resume() error {
	if !p.Running() {
		return fmt.Errorf("%s (pid %d): %w", p.Name, p.PID, ErrExited)
	}
	var err error
	if p.inst != nil {
		err = p.inst.Resume()
	} else {
		err = p.Signal(syscall.SIGCONT)
	}
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.paused = false
	p.mu.Unlock()
	return nil
}

func (p *Process) resumeIfPaused() {
	p.mu.Lock()
	paused := p.paused
	p.mu.Unlock()
	if paused {
		_ = p.Resume()
	}
}

// Stop sends SIGTERM, waits up to grace, then SIGKILL. It is a no-op on an
// exited process.
func (p *Process) Stop(grace time.Duration) error {
	if !p.Running() {
		return nil
	}
	p.markEnded()
	p.resumeIfPaused() // a stopped process cannot act on SIGTERM
	if err := p.Signal(syscall.SIGTERM); err != nil {
		if errors.Is(err, ErrExited) {
			return nil
		}
		return err
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-p.done:
		return nil
	case <-t.C:
		return p.Kill()
	}
}

// Wait waits for the exit or ctx.
func (p *Process) Wait(ctx context.Context) error {
	select {
	case <-p.done:
		return p.ExitErr()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Launcher starts specs somewhere other than as local child processes: as
// containers on a network of their own. A Group with a Launcher asks it for
// each node's address and for each start.
type Launcher interface {
	// Host is the address the node called name listens on and is reached at.
	Host(name string) string
	// Launch starts one incarnation of spec; its output goes to spec.Log.
	Launch(spec Spec) (Instance, error)
	// Close removes everything the launcher made, once every instance exited.
	Close(ctx context.Context) error
}

// Instance is one incarnation a Launcher started: a process of this host
// (its PID is signalled like a child's) living in a container.
type Instance interface {
	PID() int
	// Wait returns when the instance has exited.
	Wait() error
	// Pause freezes the whole container; Resume thaws it.
	Pause() error
	Resume() error
}

// startInstance wraps a launched instance as a Process.
func startInstance(l Launcher, spec Spec) (*Process, error) {
	inst, err := l.Launch(spec)
	if err != nil {
		return nil, fmt.Errorf("start %s: %w", spec.Name, err)
	}
	p := &Process{Spec: spec, PID: inst.PID(), Started: time.Now(), inst: inst, done: make(chan struct{})}
	go func() {
		err := inst.Wait()
		p.mu.Lock()
		p.err, p.exited = err, time.Now()
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}
