package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func sleeper(t *testing.T, g *Group, name string) *Process {
	t.Helper()
	p, err := g.Start(Spec{Name: name, Path: "/bin/sh", Args: []string{"-c", "echo started; exec sleep 60"}, Log: filepath.Join(t.TempDir(), name+".log")})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		data, _ := os.ReadFile(p.Log)
		return strings.Contains(string(data), "started")
	}, 5*time.Second, 5*time.Millisecond)
	return p
}

func TestKillPauseResumeByPID(t *testing.T) {
	g := NewGroup()
	defer g.Close(time.Second)
	p := sleeper(t, g, "a")
	require.True(t, alive(p.PID))
	require.NoError(t, p.Pause())
	stopped := func(s string) bool { return s == "T" }
	require.Equal(t, "T", procState(t, p.PID, stopped))
	require.NoError(t, p.Resume())
	require.NotEqual(t, "T", procState(t, p.PID, func(s string) bool { return !stopped(s) }))
	require.NoError(t, p.Kill())
	require.False(t, p.Running())
	require.ErrorIs(t, p.Signal(syscall.SIGTERM), ErrExited)
	_, err := g.Start(Spec{Name: "a", Path: "/bin/true", Log: filepath.Join(t.TempDir(), "a2.log")})
	require.NoError(t, err, "a name can be reused once its process exited")
	require.Len(t, g.Records(), 2)
	log, err := os.ReadFile(p.Log)
	require.NoError(t, err)
	require.Contains(t, string(log), "started")
}

func TestGroupCloseStopsEverythingEvenPaused(t *testing.T) {
	g := NewGroup()
	a, b := sleeper(t, g, "a"), sleeper(t, g, "b")
	require.NoError(t, b.Pause())
	require.True(t, b.Paused())
	require.False(t, a.Paused())
	_, err := g.Start(Spec{Name: "a", Path: "/bin/true", Log: filepath.Join(t.TempDir(), "x.log")})
	require.ErrorContains(t, err, "already running")
	require.NoError(t, g.Close(2*time.Second))
	for _, p := range []*Process{a, b} {
		require.False(t, p.Running())
		require.False(t, p.Paused())
		require.False(t, alive(p.PID), "pid %d survived", p.PID)
	}
	// a supervisor restarting a node while the group closes cannot leak it
	_, err = g.Start(Spec{Name: "c", Path: "/bin/sleep", Args: []string{"60"}, Log: filepath.Join(t.TempDir(), "c.log")})
	require.ErrorIs(t, err, ErrClosed)
}

func TestStopEscalatesToKill(t *testing.T) {
	g := NewGroup()
	p, err := g.Start(Spec{Name: "stubborn", Path: "/bin/sh",
		Args: []string{"-c", "trap '' TERM; while true; do sleep 0.1; done"}, Log: filepath.Join(t.TempDir(), "s.log")})
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond) // let the trap install
	start := time.Now()
	require.NoError(t, p.Stop(300*time.Millisecond))
	require.False(t, p.Running())
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	require.NoError(t, g.Close(time.Second))
}

// procState waits briefly for the kernel's state letter of pid to satisfy ok.
func procState(t *testing.T, pid int, ok func(string) bool) string {
	t.Helper()
	var st string
	for i := 0; i < 100; i++ {
		data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		require.NoError(t, err)
		st = strings.Fields(string(data)[strings.LastIndexByte(string(data), ')')+1:])[0]
		if ok(st) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	return st
}

// TestAProcessReapedBeforeItsDoneClosedIsExited feeds the window between
// the wait that reaps a child and the close of its Done: a Kill or Stop in
// it once failed a run's cleanup with "no such process".
func TestAProcessReapedBeforeItsDoneClosedIsExited(t *testing.T) {
	cmd := exec.Command("/bin/true")
	require.NoError(t, cmd.Run()) // reaped
	child := &Process{Spec: Spec{Name: "child"}, PID: cmd.Process.Pid, cmd: cmd, done: make(chan struct{})}
	require.ErrorIs(t, child.Signal(syscall.SIGKILL), ErrExited)
	require.NoError(t, child.Stop(time.Second), "a Stop of a process that already exited is a no-op")

	other := exec.Command("/bin/true")
	require.NoError(t, other.Run())
	byPID := &Process{Spec: Spec{Name: "container"}, PID: other.Process.Pid, done: make(chan struct{})}
	require.ErrorIs(t, byPID.Signal(syscall.SIGKILL), ErrExited, "a PID with no process (a container's, signalled by PID) is exited too")
}
