package fifo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fsnotify/fsnotify"
)

// Wait returns when a FIFO exists at path, or an error when ctx is done or
// something else is there (ErrNotFIFO, a link: sharedir.ErrSymlink). It sleeps on
// the inotify events (fsnotify) of the path's directory; while that
// directory is missing too, of its nearest ancestor that exists. Each
// directory is opened as sharedir.Enter does and watched through its descriptor
// (Dir.Watch), and the FIFO is looked for through that descriptor too: an
// event only says when to look again. Writes into FIFOs next to path wake
// the watcher but not a new look.
func Wait(ctx context.Context, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("wait for fifo %s: %w", path, err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("wait for fifo %s: %w", path, err)
	}
	defer w.Close() // waits for fsnotify's reader goroutine
	for {
		found, err := look(ctx, w, abs)
		if err != nil {
			return fmt.Errorf("wait for fifo %s: %w", path, err)
		}
		if found {
			return nil
		}
	}
}

// look watches the directory of abs, or its nearest ancestor that exists,
// and reports whether the FIFO is there; if nothing is there yet, it
// waits for a change of that directory before it returns.
func look(ctx context.Context, w *fsnotify.Watcher, abs string) (found bool, err error) {
	d, parent, err := nearestDir(filepath.Dir(abs))
	if err != nil {
		return false, err
	}
	defer d.Close()
	name, err := d.Watch(w)
	if err != nil {
		return false, err
	}
	// Gone already when the kernel ended the watch (the directory went).
	defer w.Remove(name)
	// Look only once the watch is in place, so no creation is missed.
	if parent {
		err := CheckAt(d, filepath.Base(abs))
		if !errors.Is(err, os.ErrNotExist) {
			return err == nil, err
		}
	}
	return false, nextChange(ctx, w)
}

// nextChange waits until an entry of a watched directory is made, moved
// or removed, or the directory itself is (or an event may have been lost),
// and returns nil; or returns ctx's error, or the watcher's.
func nextChange(ctx context.Context, w *fsnotify.Watcher) error {
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.Events:
			if !ok {
				return fsnotify.ErrClosed
			}
			if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				return nil
			}
		case err, ok := <-w.Errors:
			if !ok {
				return fsnotify.ErrClosed
			}
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				return err
			}
			return nil // the event looked for may be among those lost
		}
	}
}

// nearestDir enters dir, or, while it does not exist, its nearest ancestor
// that does; parent says whether it is dir itself. Any other error (a
// link refused, a file on the way) ends the wait.
func nearestDir(dir string) (d *sharedir.Dir, parent bool, err error) {
	for cur := dir; ; cur = filepath.Dir(cur) {
		d, err := sharedir.Enter(cur)
		if err == nil {
			return d, cur == dir, nil
		}
		if !errors.Is(err, os.ErrNotExist) || cur == "/" {
			return nil, false, err
		}
	}
}
