package fifo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fsnotify/fsnotify"
)

// Wait returns when a FIFO exists at path, or an error when ctx is done or
// something else (ErrNotFIFO) is there. It sleeps on inotify events of the
// parent directory; while that directory is missing too, it watches the
// nearest ancestor that exists.
func Wait(ctx context.Context, path string) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("wait for fifo %s: %w", path, err)
	}
	defer w.Close()

	watched := ""
	for {
		dir := nearestDir(filepath.Dir(path))
		if dir != watched {
			if watched != "" {
				w.Remove(watched)
			}
			if err := w.Add(dir); err != nil {
				return fmt.Errorf("wait for fifo %s: watch %s: %w", path, dir, err)
			}
			watched = dir
		}
		// Look only after the watch is in place, so no creation is missed.
		if _, err := os.Lstat(path); err == nil {
			return Check(path)
		} else if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("wait for fifo %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for fifo %s: %w", path, ctx.Err())
		case err := <-w.Errors:
			return fmt.Errorf("wait for fifo %s: %w", path, err)
		case <-w.Events:
		}
	}
}

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
