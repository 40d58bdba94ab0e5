//go:build linux

package fifo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestEnter: a Dir entered with O_PATH serves every operation on a
// named entry that a client needs, and refuses a link as sharedir.Open does.
func TestEnter(t *testing.T) {
	checkLeaks(t)
	dir, _, outFIFO := sharedDir(t)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "replies"), 0o733))
	require.NoError(t, os.Symlink(outFIFO, filepath.Join(dir, "link")))
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(dir, "dirlink")))
	d, err := sharedir.Enter(dir)
	require.NoError(t, err)
	defer d.Close()
	flags, err := unix.FcntlInt(uintptr(d.Fd()), unix.F_GETFL, 0)
	require.NoError(t, err)
	require.NotZero(t, flags&unix.O_PATH, "an entered directory is O_PATH")

	_, err = d.EnterSub("dirlink")
	require.ErrorIs(t, err, sharedir.ErrSymlink)
	replies, err := d.EnterSub("replies")
	require.NoError(t, err)
	defer replies.Close()
	created, err := MakeAt(replies, "r1", 0o600)
	require.NoError(t, err)
	require.True(t, created)
	r, err := OpenReaderNowAt(replies, "r1")
	require.NoError(t, err)
	w, err := OpenWriterNowAt(replies, "r1")
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, r.Close())
	require.NoError(t, RemoveAt(replies, "r1"))
	_, err = OpenWriterNowAt(d, "link")
	require.ErrorIs(t, err, ErrNotFIFO)
}
