//go:build linux

package tty

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
)

// TestEOFChar: a new terminal's EOF character is ^D, read from its
// master; one set on the slave is read from the master too, and one
// turned off is ErrNoEOFChar.
func TestEOFChar(t *testing.T) {
	leakcheck.Check(t)
	master, slave, err := OpenPTY(Winsize{Cols: 80, Rows: 24})
	require.NoError(t, err)
	defer master.Close()
	defer slave.Close()
	c, err := EOFChar(master)
	require.NoError(t, err)
	require.Equal(t, byte(4), c, "^D")

	set := func(c byte) {
		tio, err := unix.IoctlGetTermios(int(slave.Fd()), unix.TCGETS)
		require.NoError(t, err)
		tio.Cc[unix.VEOF] = c
		require.NoError(t, unix.IoctlSetTermios(int(slave.Fd()), unix.TCSETS, tio))
	}
	set(1) // ^A, as `stty eof ^A` makes it
	c, err = EOFChar(master)
	require.NoError(t, err)
	require.Equal(t, byte(1), c)
	set(0)
	_, err = EOFChar(master)
	require.ErrorIs(t, err, ErrNoEOFChar)
}
