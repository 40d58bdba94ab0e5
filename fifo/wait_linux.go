package fifo

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"
)

// Wait returns when a FIFO exists at path, or an error when ctx is done or
// something else is there (ErrNotFIFO, a link: sharedir.ErrSymlink). It sleeps on
// the inotify events (fsnotify) of the path's directory; while that
// directory is missing too, of its nearest ancestor that exists. Each
// directory is opened as sharedir.Enter does and watched through its descriptor
// (Dir.Watch), and the FIFO is looked for through that descriptor too: an
// event only says when to look again. Writes into FIFOs next to path wake
// the watcher but not a new look.
//
// No change is lost between a look and a watch: each watch is added
// first, and then the path is walked again, so a directory made or
// replaced before the watch was in place is watched in turn and looked
// into. What is not seen is a move of a directory above the one watched.
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

// beforeWatch, when a test sets it, runs between the entering of the
// directory to watch and its watch: the window in which a change is seen
// by neither.
var beforeWatch func(dir string)

// look watches the directory of abs, or its nearest ancestor that exists,
// and reports whether the FIFO is there; if nothing is there yet, it
// waits for a change of that directory before it returns. It returns at
// once, not found, when what the watch would have to see changed before
// the watch was in place: the caller looks again.
func look(ctx context.Context, w *fsnotify.Watcher, abs string) (found bool, err error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	dir := filepath.Dir(abs)
	d, parent, err := nearestDir(dir)
	if err != nil {
		return false, err
	}
	defer d.Close()
	if beforeWatch != nil {
		beforeWatch(d.Path())
	}
	name, err := d.Watch(w)
	if err != nil {
		return false, err
	}
	// Gone already when the kernel ended the watch (the directory went).
	defer w.Remove(name)
	// The watch sees what changes from now on. What changed since d was
	// entered (a missing directory made, d moved away or replaced) raised
	// no event it sees, so the path is walked again first.
	if same, err := stillNearest(d, dir); err != nil || !same {
		return false, err
	}
	if parent {
		err := CheckAt(d, filepath.Base(abs))
		if !errors.Is(err, os.ErrNotExist) {
			return err == nil, err
		}
	}
	return false, nextChange(ctx, w)
}

// stillNearest reports whether d, entered as dir or as its nearest
// ancestor that existed, is still that: the same directory at the same
// path, with nothing made below it on the way to dir.
func stillNearest(d *sharedir.Dir, dir string) (bool, error) {
	now, _, err := nearestDir(dir)
	if err != nil {
		return false, err
	}
	defer now.Close()
	if now.Path() != d.Path() {
		return false, nil
	}
	var a, b unix.Stat_t
	if err := unix.Fstat(d.Fd(), &a); err != nil {
		return false, fmt.Errorf("stat %s: %w", d.Path(), err)
	}
	if err := unix.Fstat(now.Fd(), &b); err != nil {
		return false, fmt.Errorf("stat %s: %w", now.Path(), err)
	}
	return a.Dev == b.Dev && a.Ino == b.Ino, nil
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
