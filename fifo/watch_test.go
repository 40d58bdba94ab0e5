//go:build linux

package fifo

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/stretchr/testify/require"
)

// TestWaitNoLinks: Wait looks through the descriptors of the directories
// it watches, so a link where the FIFO's directory should be, in a
// directory others can write, ends the wait at once (ErrSymlink) rather
// than being watched through; and a FIFO made in a directory that replaced
// the one first watched is found.
func TestWaitNoLinks(t *testing.T) {
	t.Run("link to the directory", func(t *testing.T) {
		checkLeaks(t)
		shared := t.TempDir()
		require.NoError(t, os.Chmod(shared, 0o777))
		real := filepath.Join(t.TempDir(), "real")
		require.NoError(t, os.Mkdir(real, 0o755))
		require.NoError(t, os.Symlink(real, filepath.Join(shared, "dir")))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		require.ErrorIs(t, Wait(ctx, filepath.Join(shared, "dir", "in")), sharedir.ErrSymlink)
	})
	t.Run("link made while waiting", func(t *testing.T) {
		checkLeaks(t)
		shared := t.TempDir()
		require.NoError(t, os.Chmod(shared, 0o777))
		real := filepath.Join(t.TempDir(), "real")
		require.NoError(t, os.Mkdir(real, 0o755))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- Wait(ctx, filepath.Join(shared, "dir", "in")) }()
		require.NoError(t, os.Symlink(real, filepath.Join(shared, "dir")))
		select {
		case err := <-done:
			require.ErrorIs(t, err, sharedir.ErrSymlink)
		case <-time.After(5 * time.Second):
			t.Fatal("Wait did not end at the link")
		}
	})
	t.Run("directory replaced", func(t *testing.T) {
		checkLeaks(t)
		sub := filepath.Join(t.TempDir(), "sub")
		require.NoError(t, os.Mkdir(sub, 0o755))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- Wait(ctx, filepath.Join(sub, "in")) }()
		require.NoError(t, os.Rename(sub, sub+".old"))
		require.NoError(t, os.Mkdir(sub, 0o755))
		_, err := Make(filepath.Join(sub, "in"), 0o600)
		require.NoError(t, err)
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("Wait did not see the FIFO in the new directory")
		}
	})
}
