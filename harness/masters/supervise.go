package masters

import (
	"errors"
	"time"

	"github.com/oplogha/oplogha/harness/proc"
)

// Supervisor restarts a master whose process ends, the way masters are run
// in production: systemd's Restart= or a Kubernetes pod's restartPolicy.
// A node stopped on purpose (Hold, as `systemctl stop` would) stays down
// until it is started again; a crash or a SIGKILL brings it back.
type Supervisor struct {
	// Restart is "always" (any exit), "on-failure" (a non-zero exit or a
	// signal), or "" / "no" (no supervisor).
	Restart string
	// Backoff is the delay before a restart (default 500ms). A process that
	// ends within crashLoopUptime of its start doubles the delay for the
	// next restart, up to maxBackoffFactor times Backoff, like systemd's
	// RestartSteps or a pod's CrashLoopBackOff.
	Backoff time.Duration
	// OnRestart, when set, is told of each restart (for the run's timeline):
	// how the process had ended, the delay, and whether the restart failed.
	OnRestart func(node string, exit error, after time.Duration, err error)
}

const (
	crashLoopUptime  = 10 * time.Second
	maxBackoffFactor = 16
)

// Enabled reports whether the supervisor restarts anything.
func (s Supervisor) Enabled() bool { return s.Restart == "always" || s.Restart == "on-failure" }

// Hold marks a node as stopped on purpose: the supervisor leaves it down
// until StartNode starts it again.
func (s *Set) Hold(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held[name] = true
}

func (s *Set) isHeld(name string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.held[name]
}

// Supervised reports whether the set restarts nodes that exit.
func (s *Set) Supervised() bool { return s.opts.Supervisor.Enabled() }

// supervise waits for p to end and restarts its node unless it was held,
// the exit does not call for a restart, or the group is closing. Each
// process has one such watcher; the restarted process gets its own.
func (s *Set) supervise(n *Node, p *proc.Process, delay time.Duration) {
	sup := s.opts.Supervisor
	<-p.Done()
	if s.isHeld(n.Name) || (sup.Restart == "on-failure" && p.ExitErr() == nil) {
		return
	}
	if time.Since(p.Started) >= crashLoopUptime {
		delay = sup.Backoff
	}
	time.Sleep(delay)
	if s.isHeld(n.Name) {
		return
	}
	if cur, ok := s.group.Get(n.Name); ok && cur != p {
		return // started again meanwhile (a heal): that start has its own watcher
	}
	next := min(2*delay, maxBackoffFactor*sup.Backoff)
	if err := s.start(n, next); err != nil {
		if !errors.Is(err, proc.ErrClosed) && sup.OnRestart != nil {
			sup.OnRestart(n.Name, p.ExitErr(), delay, err)
		}
		return
	}
	if sup.OnRestart != nil {
		sup.OnRestart(n.Name, p.ExitErr(), delay, nil)
	}
}
