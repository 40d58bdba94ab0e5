//go:build linux

package pipeio

import (
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// Issue 33: a child's stdin costs the agent one descriptor, not two. The
// agent's end that Input returns is open for reading and writing: what
// it writes reaches the child's end, the child reads no EOF while it is
// open, what the child left unread is read back from it, and once it is
// closed the child reads EOF.
func TestInputIsOneDescriptorForBoth(t *testing.T) {
	checkLeaks(t)
	agent, back, child, err := Input()
	require.NoError(t, err)
	defer child.Close()
	require.Same(t, agent, back, "the agent's end is its write end alone")
	require.Equal(t, unix.O_RDWR|unix.O_NONBLOCK, statusFlags(t, agent)&(unix.O_ACCMODE|unix.O_NONBLOCK),
		"the agent's end is not open for both, or blocks")
	require.Equal(t, unix.O_RDONLY, statusFlags(t, child)&(unix.O_ACCMODE|unix.O_NONBLOCK),
		"the child's end is not its read end, or does not block")

	_, err = agent.Write([]byte("taken\nleft\n"))
	require.NoError(t, err)
	got := make([]byte, len("taken\n"))
	_, err = io.ReadFull(child, got)
	require.NoError(t, err)
	require.Equal(t, "taken\n", string(got))
	left := make([]byte, 64)
	n, err := agent.Read(left)
	require.NoError(t, err)
	require.Equal(t, "left\n", string(left[:n]), "what the child left is not read back")

	require.NoError(t, agent.Close())
	n, err = child.Read(got)
	require.Zero(t, n)
	require.ErrorIs(t, err, io.EOF, "the child does not read EOF once the agent's end is closed")
}

// statusFlags returns f's file status flags (F_GETFL), without putting
// f into blocking mode as Fd would.
func statusFlags(t *testing.T, f *os.File) int {
	t.Helper()
	rc, err := f.SyscallConn()
	require.NoError(t, err)
	var fl int
	require.NoError(t, rc.Control(func(fd uintptr) { fl, err = unix.FcntlInt(fd, unix.F_GETFL, 0) }))
	require.NoError(t, err)
	return fl
}
