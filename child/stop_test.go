package child

import (
	"math"
	"syscall"
	"testing"
	"time"

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
