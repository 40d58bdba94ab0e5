//go:build linux

package sharedir

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/leakcheck"
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
	leakcheck.Check(t)
	path := filepath.Join(t.TempDir(), "d")
	require.NoError(t, os.Mkdir(path, 0o755))
	d, err := Open(path, false)
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
