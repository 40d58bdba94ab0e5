//go:build linux

package child

import (
	"math"
	"syscall"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/procfs"
	"github.com/stretchr/testify/require"
)

// notAPid is above any pid_max (at most 2^22): no process has it.
const notAPid = 1<<22 + 1

// TestStopGivesUp stops a child that is never reaped, as one stuck in
// uninterruptible sleep: Stop must return after its patience, not loop.
func TestStopGivesUp(t *testing.T) {
	// A Process no fork made; its start time is after anything, so that
	// no orphan of the agent is taken for its own.
	stuck := &Process{Pid: notAPid, startTicks: math.MaxUint64, done: make(chan struct{})}
	done := make(chan ExitStatus, 1)
	go func() { done <- testReaper.Stop(stuck, syscall.SIGTERM, 10*time.Millisecond) }()
	select {
	case st := <-done:
		require.Equal(t, 137, st.Code(), "a child never reaped is reported killed by SIGKILL")
	case <-time.After(killPatience + 20*time.Second):
		t.Fatal("Stop did not give up on a process that survives SIGKILL")
	}
}

// TestStopNamesSurvivors gives Stop a tree with a process that never goes
// and a short patience: it returns the child's status and names the pid.
func TestStopNamesSurvivors(t *testing.T) {
	m := mark(t)
	p, err := testReaper.Start(helperSpec(t, m, "sleep"))
	require.NoError(t, err)
	undying := func(*Process) []proc { return []proc{{PID: notAPid, PPID: p.Pid, PGID: notAPid, SID: notAPid}} }
	st, left, _ := testReaper.stop(p, syscall.SIGTERM, time.Second, 100*time.Millisecond, undying)
	require.Contains(t, []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL}, st.Signal(), "the child's own status: %v", st)
	require.Equal(t, []int{notAPid}, left)
	checkGone(t, m)
}

// TestPidfdsClosed checks that a running child holds no descriptor of the
// agent's (no pidfd: its unreaped pid names it), and that Stop's
// per-process pidfds are closed.
func TestPidfdsClosed(t *testing.T) {
	m := mark(t)
	var specs []Spec
	for range 20 {
		specs = append(specs, helperSpec(t, m, "tree", "stay")) // its files stay open until t ends
	}
	before := procfs.Descriptors()
	var procs []*Process
	for _, spec := range specs {
		p, err := testReaper.Start(spec)
		require.NoError(t, err)
		procs = append(procs, p)
	}
	require.Eventually(t, func() bool { return len(marked(m)) == 4*len(procs) }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, before, procfs.Descriptors(), "descriptors held for running children")
	for _, p := range procs {
		testReaper.Stop(p, syscall.SIGTERM, 0)
	}
	require.Equal(t, before, procfs.Descriptors())
	checkGone(t, m)
}
