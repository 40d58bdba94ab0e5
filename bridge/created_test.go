//go:build linux

package bridge

import (
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/leakcheck"
	"github.com/fifobridge/fifobridge/sharedir"
)

// The agent removes at exit the FIFOs it made, and only those: a FIFO
// someone else put in the place of one (another user's, in a directory
// others may write) is theirs, and stays.
func TestRemoveCreatedOnlyItsOwn(t *testing.T) {
	leakcheck.Check(t)
	d, err := sharedir.Open(t.TempDir(), false)
	require.NoError(t, err)
	defer d.Close()
	a := &agent{}
	for _, name := range []string{"in", "out"} {
		made, err := fifo.MakeAt(d, name, 0o600)
		require.NoError(t, err)
		require.True(t, made)
		a.addCreated(d, name)
	}
	// "in" is replaced by a FIFO the agent did not make.
	require.NoError(t, unix.Renameat(d.Fd(), "in", d.Fd(), "in.old"))
	require.NoError(t, unix.Mkfifoat(d.Fd(), "in", 0o600))

	a.removeCreated()
	require.NoError(t, fifo.CheckAt(d, "in"), "a FIFO the agent did not make was removed")
	_, err = d.Stat("out")
	require.ErrorIs(t, err, unix.ENOENT, "the FIFO the agent made is still there")
}
