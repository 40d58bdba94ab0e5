//go:build linux

package child

import (
	"os"
	"syscall"
	"testing"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// dumpable is the process's PR_GET_DUMPABLE.
func dumpable(t *testing.T) int {
	t.Helper()
	d, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	require.NoError(t, err)
	return d
}

// TestAsUserDumpable: while the thread has the child's ids the agent is
// not dumpable (no process of that user may trace the thread); once
// asUser returns, that thread is gone and the agent is dumpable again,
// as it was, so that root without CAP_SYS_PTRACE (docker exec) still
// reads /proc/1/fd and a crash still dumps core. An agent made not
// dumpable by someone else stays so.
func TestAsUserDumpable(t *testing.T) {
	requireRoot(t, "taking another user's ids")
	leakcheck.Check(t)
	require.Equal(t, 1, dumpable(t), "the test process is dumpable to begin with")
	nobody := &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}
	var during, uid int
	var err error
	require.NoError(t, asUser(nobody, func() {
		during, err = unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
		uid = os.Getuid()
	}))
	require.NoError(t, err)
	require.Equal(t, 65534, uid, "the thread's real uid")
	require.Equal(t, 0, during, "not dumpable while a thread has the child's ids")
	require.Empty(t, threadsWithUid(t, 65534), "a thread with the child's uid outlived asUser")
	require.Equal(t, 1, dumpable(t), "dumpable again once the thread is gone")

	t.Run("set by another", func(t *testing.T) {
		require.NoError(t, unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0))
		defer unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
		require.NoError(t, asUser(nobody, func() {}))
		require.Empty(t, threadsWithUid(t, 65534), "a thread with the child's uid outlived asUser")
		require.Equal(t, 0, dumpable(t), "not dumpable before asUser: stays so")
	})
}
