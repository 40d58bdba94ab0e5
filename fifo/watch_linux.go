package fifo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Watcher reports inotify events of the directories it watches. It is a
// bare inotify descriptor read through the runtime's poller: no goroutine
// of its own, and Next returns as soon as its context is done. (fsnotify
// did the same with a reader goroutine, and linking it cost every start
// of the agent its package's initialisation.)
type Watcher struct {
	f *os.File
}

// WatchEvent is one inotify event: the name of the entry it concerns in
// the watched directory ("" for the directory itself) and its mask.
type WatchEvent struct {
	Name string
	Mask uint32
}

// NewWatcher makes a Watcher that watches nothing yet.
func NewWatcher() (*Watcher, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, fmt.Errorf("inotify: %w", err)
	}
	return &Watcher{f: os.NewFile(uintptr(fd), "inotify")}, nil
}

// Add watches the directory at path for the events in mask, and returns
// the watch's descriptor. A /proc/self/fd link watches the directory it
// names.
func (w *Watcher) Add(path string, mask uint32) (int, error) {
	var wd int
	err := w.control(func(fd int) (err error) {
		wd, err = unix.InotifyAddWatch(fd, path, mask)
		return err
	})
	if err != nil {
		return -1, fmt.Errorf("watch %s: %w", path, err)
	}
	return wd, nil
}

// Remove ends the watch wd.
func (w *Watcher) Remove(wd int) error {
	return w.control(func(fd int) error {
		_, err := unix.InotifyRmWatch(fd, uint32(wd))
		return err
	})
}

func (w *Watcher) control(f func(fd int) error) error {
	rc, err := w.f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// past is a deadline that has passed: it wakes a Read at once.
var past = time.Unix(1, 0)

// Next waits for events and returns them, or ctx's error once ctx is done,
// or ErrClosed after Close.
func (w *Watcher) Next(ctx context.Context) ([]WatchEvent, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	w.f.SetReadDeadline(time.Time{})
	stop := context.AfterFunc(ctx, func() { w.f.SetReadDeadline(past) })
	defer stop()
	var buf [4096]byte // holds at least one event of any name (NAME_MAX)
	for {
		n, err := w.f.Read(buf[:])
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, os.ErrClosed):
			return nil, ErrClosed
		case errors.Is(err, os.ErrDeadlineExceeded):
			// The deadline of a context done in an earlier call. Once
			// it is cleared, ctx is looked at again: its own deadline
			// may have been the one cleared.
			w.f.SetReadDeadline(time.Time{})
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		case err != nil:
			return nil, fmt.Errorf("read inotify events: %w", err)
		}
		return parseEvents(buf[:n]), nil
	}
}

// parseEvents splits what a read of an inotify descriptor returned.
func parseEvents(b []byte) []WatchEvent {
	var evs []WatchEvent
	for len(b) >= unix.SizeofInotifyEvent {
		raw := (*unix.InotifyEvent)(unsafe.Pointer(&b[0]))
		end := unix.SizeofInotifyEvent + int(raw.Len)
		if end > len(b) {
			break
		}
		name := b[unix.SizeofInotifyEvent:end]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		evs = append(evs, WatchEvent{Name: string(name), Mask: raw.Mask})
		b = b[end:]
	}
	return evs
}

// Close ends every watch; a Next under way returns ErrClosed.
func (w *Watcher) Close() error { return w.f.Close() }
