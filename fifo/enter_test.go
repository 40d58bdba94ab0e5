package fifo

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestEnterDir: a Dir entered with O_PATH serves every operation on a
// named entry that a client needs, and refuses a link as OpenDir does.
func TestEnterDir(t *testing.T) {
	checkLeaks(t)
	dir, _, outFIFO := sharedDir(t)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "replies"), 0o733))
	require.NoError(t, os.Symlink(outFIFO, filepath.Join(dir, "link")))
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(dir, "dirlink")))
	d, err := EnterDir(dir)
	require.NoError(t, err)
	defer d.Close()
	flags, err := unix.FcntlInt(uintptr(d.Fd()), unix.F_GETFL, 0)
	require.NoError(t, err)
	require.NotZero(t, flags&unix.O_PATH, "an entered directory is O_PATH")

	_, err = d.EnterSub("dirlink")
	require.ErrorIs(t, err, ErrSymlink)
	replies, err := d.EnterSub("replies")
	require.NoError(t, err)
	defer replies.Close()
	created, err := replies.Make("r1", 0o600)
	require.NoError(t, err)
	require.True(t, created)
	r, err := replies.OpenReaderNow("r1")
	require.NoError(t, err)
	w, err := replies.OpenWriterNow("r1")
	require.NoError(t, err)
	require.NoError(t, w.Close())
	require.NoError(t, r.Close())
	require.NoError(t, replies.RemoveFIFO("r1"))
	_, err = d.OpenWriterNow("link")
	require.ErrorIs(t, err, ErrNotFIFO)
}
