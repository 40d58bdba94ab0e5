//go:build linux

package stream

import (
	"errors"
	"io"
	"os"
	"strings"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/internal/tty"
	"github.com/fifobridge/fifobridge/sharedir"
)

// winsizeName is the file in DIR that sets the terminals' window size.
const winsizeName = "winsize"

// maxWinsize is the most of DIR/winsize that is read: "65535x65535\n" and
// some spaces fit.
const maxWinsize = 64

// watchWinsize resizes t's terminals to the size written into DIR/winsize,
// until done is closed. The directory is watched through its descriptor
// (Dir.Watch), also once DIR was moved, so the file may be written in
// place, made, or renamed there; an event only says when to look, and the
// file is read with Dir.OpenFile: a regular file, no link followed. Text
// that does not parse is ignored, logged once for as long as the file
// holds it; an empty file is not a size yet and ignored quietly.
func (t *terminal) watchWinsize(dir *sharedir.Dir, done <-chan struct{}) {
	log := t.cfg.Log
	w, err := fsnotify.NewWatcher()
	if err != nil {
		log.Warn("cannot watch for window sizes: "+winsizeName+" is not read", "err", err)
		return
	}
	defer w.Close() // waits for fsnotify's reader goroutine
	watched, err := dir.Watch(w)
	if err != nil {
		log.Warn("cannot watch for window sizes: "+winsizeName+" is not read", "err", err)
		return
	}
	file := watched + "/" + winsizeName
	bad := "" // the text last logged as not a size
	for {
		select {
		case <-done:
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			switch {
			case ev.Name == file && (ev.Has(fsnotify.Write) || ev.Has(fsnotify.Create)):
				bad = t.applyWinsize(dir, bad)
			case ev.Name == watched && ev.Has(fsnotify.Rename):
				// fsnotify ends the watch of a directory that moved; the
				// descriptor still names it.
				if _, err := dir.Watch(w); err != nil {
					log.Warn("cannot watch for window sizes any more: "+winsizeName+" is not read", "err", err)
					return
				}
				bad = t.applyWinsize(dir, bad) // written before the watch was back
			}
		case err, ok := <-w.Errors:
			if !ok {
				return
			}
			if !errors.Is(err, fsnotify.ErrEventOverflow) {
				log.Warn("cannot watch for window sizes any more: "+winsizeName+" is not read", "err", err)
				return
			}
			bad = t.applyWinsize(dir, bad) // the file's event may be among those lost
		}
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
