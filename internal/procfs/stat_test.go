//go:build linux

package procfs

import (
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestMain makes the test binary its own child: with PROCFS_TEST_EXIT set
// it exits at once.
func TestMain(m *testing.M) {
	if os.Getenv("PROCFS_TEST_EXIT") == "1" {
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// TestStatNameWithParens: Stat counts the fields from the last ')', so a
// command name that reads like the fields after it (here the name of the
// test's thread) changes nothing.
func TestStatNameWithParens(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	const comm = "/proc/thread-self/comm"
	old, err := os.ReadFile(comm)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(comm, []byte("x) Z 1 2 3 4 ("), 0))
	defer func() { require.NoError(t, os.WriteFile(comm, old, 0)) }()

	tid := unix.Gettid()
	p, ok := Stat(strconv.Itoa(tid))
	require.True(t, ok)
	sid, err := unix.Getsid(0)
	require.NoError(t, err)
	require.Equal(t, Proc{PID: tid, PPID: os.Getppid(), PGID: unix.Getpgrp(), SID: sid, State: 'R', Start: p.Start}, p)
	self, ok := Stat(strconv.Itoa(os.Getpid()))
	require.True(t, ok)
	require.GreaterOrEqual(t, p.Start, self.Start, "a thread starts after its process")
	require.Equal(t, os.Getpid(), SelfPID())
}

// TestProcessesZombie: Stat sees a zombie as one, Processes leaves it out
// and lists the caller, and once reaped the process is gone from both.
func TestProcessesZombie(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	c := exec.Command(exe)
	c.Env = append(os.Environ(), "PROCFS_TEST_EXIT=1")
	require.NoError(t, c.Start())
	pid := c.Process.Pid
	// Wait until it has exited, without reaping it.
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			require.NoError(t, err)
			break
		}
	}

	p, ok := Stat(strconv.Itoa(pid))
	require.True(t, ok)
	require.Equal(t, byte('Z'), p.State)
	require.Equal(t, os.Getpid(), p.PPID)
	pids := func() []int {
		var out []int
		for _, q := range Processes() {
			out = append(out, q.PID)
		}
		return out
	}
	require.Contains(t, pids(), os.Getpid())
	require.NotContains(t, pids(), pid, "a zombie is left out")

	require.NoError(t, c.Wait())
	_, ok = Stat(strconv.Itoa(pid))
	require.False(t, ok, "reaped, the child is gone")
	require.NotContains(t, pids(), pid)
}
