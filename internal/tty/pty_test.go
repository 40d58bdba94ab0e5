//go:build linux

package tty

import (
	"testing"

	"github.com/fifobridge/fifobridge/internal/procfs"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

func TestParseWinsize(t *testing.T) {
	for in, want := range map[string]Winsize{"80x24": {80, 24}, " 120x40\n": {120, 40}, "65535x1": {65535, 1}} {
		got, err := ParseWinsize(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "80", "80x", "x24", "0x24", "80x0", "80X24", "-1x24", "65536x24", "80x24x1", "garbage"} {
		_, err := ParseWinsize(in)
		require.Error(t, err, "%q", in)
	}
}

func TestOpenPTY(t *testing.T) {
	before := procfs.Descriptors()
	master, slave, err := OpenPTY(Winsize{Cols: 132, Rows: 43})
	require.NoError(t, err)
	for _, f := range []int{int(master.Fd()), int(slave.Fd())} {
		flags, err := unix.FcntlInt(uintptr(f), unix.F_GETFD, 0)
		require.NoError(t, err)
		require.NotZero(t, flags&unix.FD_CLOEXEC, "an end of the terminal lacks O_CLOEXEC")
	}
	ws, err := unix.IoctlGetWinsize(int(slave.Fd()), unix.TIOCGWINSZ)
	require.NoError(t, err)
	require.Equal(t, [2]uint16{132, 43}, [2]uint16{ws.Col, ws.Row})
	require.NoError(t, Resize(master, Winsize{Cols: 100, Rows: 30}))
	ws, err = unix.IoctlGetWinsize(int(slave.Fd()), unix.TIOCGWINSZ)
	require.NoError(t, err)
	require.Equal(t, [2]uint16{100, 30}, [2]uint16{ws.Col, ws.Row})
	require.NoError(t, slave.Close())
	require.NoError(t, master.Close())
	require.Equal(t, before, procfs.Descriptors(), "descriptors left open")
}
