//go:build linux

package stream

import (
	"errors"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/internal/tty"
	"github.com/fifobridge/fifobridge/internal/watch"
	"github.com/fifobridge/fifobridge/sharedir"
)

// winsizeName is the file in DIR that sets the terminals' window size.
const winsizeName = "winsize"

// maxWinsize is the most of DIR/winsize that is read: "65535x65535\n" and
// some spaces fit.
const maxWinsize = 64

// winsizeEvents are the events that may bring a new DIR/winsize: an
// entry made or renamed there. Writes into the FIFOs next to it make no
// such event.
const winsizeEvents = unix.IN_CREATE | unix.IN_MOVED_TO

// winsizeWrites are the events of the file itself: written in place.
const winsizeWrites = unix.IN_MODIFY | unix.IN_CLOSE_WRITE

// winsizeWatch resizes a terminal's window to the size written into
// DIR/winsize. It watches DIR for a winsize made or renamed there, and
// the file that is there for writes, through the agent's one inotify
// instance (sharedir.Dir.Notify and NotifyEntry: through descriptors,
// also once DIR was moved, never following a link); an event only says
// when to look, and the file is read with Dir.OpenFile: a regular file,
// no link followed. The looks run one at a time (watch.Runner), in a
// goroutine only while there is something to look at: an idle terminal
// costs no goroutine and no timer. Text that does not parse is ignored,
// logged once for as long as the file holds it; an empty file is not a
// size yet and ignored quietly. What the file holds at the start is not
// applied: the size is -tty-size until winsize is written.
type winsizeWatch struct {
	t    *terminal
	dir  *sharedir.Dir
	look *watch.Runner

	mu      sync.Mutex
	dirW    *watch.Watch
	fileW   *watch.Watch // the watch of the file there now, or nil
	rewatch bool         // the file there may be another: watch it anew
	apply   bool         // the file may hold a new size: read it
	stopped bool

	bad string // the text last logged as not a size; the look's own
}

// watchWinsize starts the watch of DIR/winsize for t's terminals, or logs
// why there is none (inotify cannot be had: the file is not read). Stop
// ends it.
func (t *terminal) watchWinsize(dir *sharedir.Dir) *winsizeWatch {
	w := &winsizeWatch{t: t, dir: dir, rewatch: true}
	w.look = watch.NewRunner(w.lookAt)
	var err error
	w.dirW, err = dir.Notify(winsizeEvents, w.dirEvent)
	if err != nil {
		t.cfg.Log.Warn("cannot watch for window sizes: "+winsizeName+" is not read", "err", err)
		return w
	}
	w.look.Kick() // watches the file there now
	return w
}

// dirEvent is told of DIR's events, on the watch's reader: it never
// waits.
func (w *winsizeWatch) dirEvent(ev watch.Event) {
	switch {
	case ev.Mask&unix.IN_Q_OVERFLOW != 0:
		w.kick(true) // the file's event may be among those lost
	case ev.Name == winsizeName && ev.Mask&winsizeEvents != 0:
		w.kick(true)
	}
}

// fileEvent is told of the file's events, on the watch's reader.
func (w *winsizeWatch) fileEvent(ev watch.Event) {
	if ev.Mask&(winsizeWrites|unix.IN_Q_OVERFLOW) != 0 {
		w.kick(false)
	}
}

// kick has the file read (and watched anew, with rewatch) soon.
func (w *winsizeWatch) kick(rewatch bool) {
	w.mu.Lock()
	w.apply = true
	w.rewatch = w.rewatch || rewatch
	w.mu.Unlock()
	w.look.Kick()
}

// lookAt watches the file anew and applies its size, as the kicks since
// the last look asked.
func (w *winsizeWatch) lookAt() {
	w.mu.Lock()
	rewatch, apply, stopped := w.rewatch, w.apply, w.stopped
	w.rewatch, w.apply = false, false
	old := w.fileW
	if rewatch {
		w.fileW = nil
	}
	w.mu.Unlock()
	if stopped {
		return
	}
	if rewatch {
		if old != nil {
			old.Remove()
		}
		// A link, a FIFO, nothing: no watch; applyWinsize says why.
		if fw, err := w.dir.NotifyEntry(winsizeName, winsizeWrites, w.fileEvent); err == nil {
			w.mu.Lock()
			w.fileW = fw
			w.mu.Unlock()
		}
	}
	if apply {
		w.bad = w.t.applyWinsize(w.dir, w.bad)
	}
}

// Stop ends the watch and waits for a look under way.
func (w *winsizeWatch) Stop() {
	w.mu.Lock()
	w.stopped = true
	dirW := w.dirW
	w.mu.Unlock()
	if dirW != nil {
		dirW.Remove()
	}
	w.look.Stop()
	w.mu.Lock()
	fileW := w.fileW
	w.fileW = nil
	w.mu.Unlock()
	if fileW != nil {
		fileW.Remove()
	}
}

// applyWinsize resizes the terminals to the size in DIR/winsize. What
// cannot be used is logged unless it is bad, what was logged last; it
// returns what it logged, or "" after a size was applied.
func (t *terminal) applyWinsize(dir *sharedir.Dir, bad string) string {
	text, err := readWinsize(dir)
	switch {
	case err != nil && !errors.Is(err, os.ErrNotExist):
		// A link, a FIFO, ...: refused, not followed or read.
		if msg := err.Error(); msg != bad {
			t.cfg.Log.Warn("ignoring "+dir.Join(winsizeName), "err", err)
			return msg
		}
		return bad
	case err != nil, strings.TrimSpace(text) == "":
		return bad // gone again, or not written yet
	}
	size, err := tty.ParseWinsize(text)
	if err != nil {
		if text != bad {
			t.cfg.Log.Warn("ignoring "+dir.Join(winsizeName)+": not COLSxROWS", "text", text)
		}
		return text
	}
	t.resize(size)
	return ""
}

// readWinsize returns the start of DIR/winsize.
func readWinsize(dir *sharedir.Dir) (string, error) {
	f, err := dir.OpenFile(winsizeName, unix.O_RDONLY, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	buf := make([]byte, maxWinsize)
	n, err := io.ReadFull(f, buf)
	if err == io.ErrUnexpectedEOF || err == io.EOF {
		err = nil
	}
	return string(buf[:n]), err
}
