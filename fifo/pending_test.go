//go:build linux

package fifo

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/sharedir"
)

// pendingSource is a Source of the missing FIFO "f" in a new directory.
func pendingSource(t *testing.T) (*Source, string) {
	t.Helper()
	dir := t.TempDir()
	d, err := sharedir.Open(dir, false)
	require.NoError(t, err)
	t.Cleanup(func() { d.Close() })
	return PendingSourceAt(d, "f"), filepath.Join(dir, "f")
}

// TestPendingSource: a Source made while its FIFO is missing serves
// nothing, and its Read waits, until Reopen serves the first FIFO, made
// with create, or found; Close ends the wait.
func TestPendingSource(t *testing.T) {
	t.Run("made", func(t *testing.T) {
		checkLeaks(t)
		src, p := pendingSource(t)
		defer src.Close()
		_, err := src.Describe()
		require.ErrorIs(t, err, ErrPending)
		read := make(chan string, 1)
		go func() {
			got := make([]byte, 5)
			_, err := io.ReadFull(src, got)
			read <- string(got) + errString(err)
		}()
		changed, created, err := src.Reopen(false, 0o600, nil)
		require.NoError(t, err)
		require.False(t, changed || created, "without create a missing FIFO stays missing")
		changed, created, err = src.Reopen(true, 0o620, nil)
		require.NoError(t, err)
		require.True(t, changed && created)
		fi, err := os.Lstat(p)
		require.NoError(t, err)
		require.Equal(t, os.ModeNamedPipe|0o620, fi.Mode())
		i, err := src.Describe()
		require.NoError(t, err)
		require.Equal(t, fileIno(t, p), i.Ino)
		writeTo(t, p, "hello")
		require.Equal(t, "hello", <-read)
	})
	t.Run("found", func(t *testing.T) {
		checkLeaks(t)
		src, p := pendingSource(t)
		defer src.Close()
		_, err := Make(p, 0o600)
		require.NoError(t, err)
		// A writer that keeps it open for reading too: its bytes wait in
		// the FIFO until the Source serves it.
		early, err := os.OpenFile(p, os.O_RDWR, 0)
		require.NoError(t, err)
		_, err = early.Write([]byte("early"))
		require.NoError(t, err)
		changed, created, err := src.Reopen(false, 0, nil)
		require.NoError(t, err)
		require.True(t, changed)
		require.False(t, created)
		require.NoError(t, early.Close())
		got := make([]byte, 5)
		_, err = io.ReadFull(src, got)
		require.NoError(t, err)
		require.Equal(t, "early", string(got))
	})
	t.Run("closed", func(t *testing.T) {
		checkLeaks(t)
		src, _ := pendingSource(t)
		read := make(chan error, 1)
		go func() { _, err := src.Read(make([]byte, 1)); read <- err }()
		require.NoError(t, src.Close())
		require.ErrorIs(t, <-read, ErrClosed)
		_, _, err := src.Reopen(true, 0o600, nil)
		require.ErrorIs(t, err, ErrClosed)
	})
}

func errString(err error) string {
	if err != nil {
		return " " + err.Error()
	}
	return ""
}

func fileIno(t *testing.T, p string) uint64 {
	t.Helper()
	var st unix.Stat_t
	require.NoError(t, unix.Stat(p, &st))
	return st.Ino
}
