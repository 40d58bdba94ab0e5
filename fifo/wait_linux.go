package fifo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Wait returns when a FIFO exists at path, or an error when ctx is done or
// something else (ErrNotFIFO) is there. It sleeps on inotify events of the
// parent directory; while that directory is missing too, it watches the
// nearest ancestor that exists. Only entries made or moved there, and the
// directory itself going, wake it: not writes into FIFOs next to path.
func Wait(ctx context.Context, path string) error {
	w, err := NewWatcher()
	if err != nil {
		return fmt.Errorf("wait for fifo %s: %w", path, err)
	}
	defer w.Close()

	watched, wd := "", -1
	for {
		dir := nearestDir(filepath.Dir(path))
		if dir != watched {
			if wd >= 0 {
				w.Remove(wd)
			}
			if wd, err = w.Add(dir, waitEvents); err != nil {
				return fmt.Errorf("wait for fifo %s: %w", path, err)
			}
			watched = dir
		}
		// Look only after the watch is in place, so no creation is missed.
		if _, err := os.Lstat(path); err == nil {
			return Check(path)
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("wait for fifo %s: %w", path, err)
		}
		if _, err := w.Next(ctx); err != nil {
			return fmt.Errorf("wait for fifo %s: %w", path, err)
		}
	}
}

// waitEvents are what Wait wakes for in the directory it watches: an
// entry made or moved in (the FIFO, or a missing directory on its path),
// or the directory itself removed or moved (IN_IGNORED comes anyway).
const waitEvents = unix.IN_CREATE | unix.IN_MOVED_TO | unix.IN_DELETE_SELF | unix.IN_MOVE_SELF | unix.IN_ONLYDIR

// nearestDir returns dir, or its nearest ancestor that exists.
func nearestDir(dir string) string {
	for {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return dir
		}
		dir = parent
	}
}
