package fifo

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/stretchr/testify/require"
)

// nextEvent returns the next event of w that names name, failing the test
// after a while without one.
func nextEvent(t *testing.T, w *fsnotify.Watcher, name string) fsnotify.Event {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case ev := <-w.Events:
			if ev.Name == name {
				return ev
			}
		case err := <-w.Errors:
			t.Fatalf("watch: %v", err)
		case <-timeout:
			t.Fatalf("no event for %s", name)
		}
	}
}

// TestDirWatch: a Dir is watched through its descriptor, so the watch
// stays on the directory that was opened when its path names another one;
// events name the entry under the watch's name.
func TestDirWatch(t *testing.T) {
	checkLeaks(t)
	path := filepath.Join(t.TempDir(), "d")
	require.NoError(t, os.Mkdir(path, 0o755))
	d, err := OpenDir(path, false)
	require.NoError(t, err)
	defer d.Close()
	w, err := fsnotify.NewWatcher()
	require.NoError(t, err)
	defer w.Close()
	name, err := d.Watch(w)
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(filepath.Join(path, "winsize"), []byte("80x24"), 0o644))
	require.True(t, nextEvent(t, w, name+"/winsize").Has(fsnotify.Create))

	// The path now names a new directory: what is made there is not seen,
	// what is made in the opened one is. (fsnotify ends a watch whose
	// directory moved, saying so; it is added again through d.)
	require.NoError(t, os.Rename(path, path+".old"))
	require.True(t, nextEvent(t, w, name).Has(fsnotify.Rename))
	again, err := d.Watch(w)
	require.NoError(t, err)
	require.Equal(t, name, again)
	require.NoError(t, os.Mkdir(path, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(path, "elsewhere"), nil, 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(path+".old", "here"), nil, 0o644))
	for {
		ev := nextEvent(t, w, name+"/here")
		require.NotEqual(t, name+"/elsewhere", ev.Name)
		if ev.Has(fsnotify.Create) {
			break
		}
	}
}

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
		require.ErrorIs(t, Wait(ctx, filepath.Join(shared, "dir", "in")), ErrSymlink)
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
			require.ErrorIs(t, err, ErrSymlink)
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
