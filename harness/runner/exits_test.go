package runner

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/oplogha/oplogha/harness/audit"
	"github.com/oplogha/oplogha/harness/proc"
	"github.com/oplogha/oplogha/harness/scenario"
)

// TestAFailpointPanicIsArmedEvenBeforeItsFaultIsRecorded: a node that
// panics at a failpoint before the fault that armed it was recorded (it hit
// the failpoint on its next append, the arming call not yet returned) is a
// crash the scenario armed — its log names the failpoint panic — while a
// panic of its own is the master's.
func TestAFailpointPanicIsArmedEvenBeforeItsFaultIsRecorded(t *testing.T) {
	exitWith := func(output string) *proc.Process {
		p, err := proc.Start(proc.Spec{Name: "master-0", Path: "/bin/sh", Args: []string{"-c", "printf '" + output + "'; exit 2"},
			Log: filepath.Join(t.TempDir(), "master-0.log")})
		require.NoError(t, err)
		select {
		case <-p.Done():
		case <-time.After(10 * time.Second):
			t.Fatal("the process did not exit")
		}
		return p
	}
	r := &run{sc: &scenario.Scenario{}}
	r.masterExited("master-0", exitWith(`panic: failpoint panic: {}\n\ngoroutine 7 [running]:\nmain.f()\n`))
	r.masterExited("master-0", exitWith(`panic: runtime error: index out of range\n\ngoroutine 7 [running]:\n`))
	evs, _ := r.events.snapshot()
	require.Len(t, evs, 2)
	require.Equal(t, audit.ExitArmed, evs[0].Name, evs[0].Detail)
	require.Contains(t, evs[0].Detail, "a failpoint panic the harness armed")
	require.Equal(t, audit.ExitOwn, evs[1].Name, "a panic of its own is the master's")
}
