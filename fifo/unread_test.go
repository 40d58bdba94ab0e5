//go:build linux

package fifo

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// TestRemoveUnread: only a FIFO that nobody reads and that is older than
// the cut-off goes; a FIFO with a reader, a young one, and anything that is
// not a FIFO (a link to one outside included) stay, and the link's target
// is not touched.
func TestRemoveUnread(t *testing.T) {
	checkLeaks(t)
	dir, secret, outFIFO := sharedDir(t)
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	defer d.Close()
	for _, name := range []string{"unread", "read", "young"} {
		require.NoError(t, unix.Mkfifo(filepath.Join(dir, name), 0o600))
	}
	r, err := OpenReaderNowAt(d, "read")
	require.NoError(t, err)
	defer r.Close()
	require.NoError(t, os.Symlink(outFIFO, filepath.Join(dir, "link")))
	require.NoError(t, os.Symlink(secret, filepath.Join(dir, "secretlink")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), nil, 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "dir"), 0o700))

	var names []string
	require.NoError(t, d.EachName(func(name string) { names = append(names, name) }))
	slices.Sort(names)
	require.Equal(t, []string{"dir", "file", "link", "read", "secretlink", "unread", "young"}, names)

	later := time.Now().Add(time.Second)
	for _, name := range []string{"read", "link", "secretlink", "file", "dir"} {
		removed, _ := RemoveUnreadAt(d, name, later)
		require.False(t, removed, name)
	}
	removed, err := RemoveUnreadAt(d, "young", time.Now().Add(-time.Minute))
	require.NoError(t, err)
	require.False(t, removed, "a FIFO younger than the cut-off stays")
	removed, err = RemoveUnreadAt(d, "unread", later)
	require.NoError(t, err)
	require.True(t, removed)

	names = nil
	require.NoError(t, d.EachName(func(name string) { names = append(names, name) }))
	slices.Sort(names)
	require.Equal(t, []string{"dir", "file", "link", "read", "secretlink", "young"}, names)
	require.Equal(t, os.ModeNamedPipe, modeOf(t, outFIFO).Type(), "the link's target is left")
}
