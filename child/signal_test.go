//go:build linux

package child

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/testgate"
	"github.com/stretchr/testify/require"
)

// requireRoot skips t unless it runs as root; with
// FIFOBRIDGE_REQUIRE_PRIVILEGED=1 it fails instead.
func requireRoot(t *testing.T, why string) {
	t.Helper()
	if os.Getuid() == 0 {
		return
	}
	testgate.Skip(t, "%s", why+" needs root")
}

// startAt starts a sleeping helper, in a process group of its own, with the
// given pid: the kernel is asked to hand out that pid next
// (ns_last_pid). Another process forking at the same moment may take it,
// so it tries again.
func startAt(t *testing.T, m string, pid int) *Process {
	t.Helper()
	requireRoot(t, "choosing a pid")
	for range 200 {
		require.NoError(t, os.WriteFile("/proc/sys/kernel/ns_last_pid", []byte(strconv.Itoa(pid-1)), 0))
		q, err := testReaper.Start(helperSpec(t, m, "sleep"))
		require.NoError(t, err)
		if q.Pid == pid {
			return q
		}
		testReaper.Stop(q, syscall.SIGKILL, 0)
	}
	t.Fatalf("could not start a process with pid %d", pid)
	return nil
}

// TestSignalAfterReap reuses the pid of a reaped child for a new process
// group, as the kernel may at any time, and checks that neither Signal nor
// Stop of the old child reaches the new group.
func TestSignalAfterReap(t *testing.T) {
	m := mark(t)
	p, err := testReaper.Start(helperSpec(t, m, "exit", "0"))
	require.NoError(t, err)
	require.Equal(t, 0, waitStatus(t, p).Code())
	other := startAt(t, m, p.Pid)

	require.ErrorIs(t, p.Signal(syscall.SIGKILL), os.ErrProcessDone)
	require.Equal(t, 0, testReaper.Stop(p, syscall.SIGKILL, 0).Code())
	// Had a SIGKILL reached it, the other process would have died of that
	// before this TERM.
	require.Equal(t, 143, testReaper.Stop(other, syscall.SIGTERM, 10*time.Second).Code(), "the new group was signalled")
	checkGone(t, m)
}
