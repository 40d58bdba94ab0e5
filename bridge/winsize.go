package bridge

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
)

// winsizeName is the file in DIR that sets the terminals' window size.
const winsizeName = "winsize"

// maxWinsize is the most of DIR/winsize that is read: "65535x65535\n" and
// some spaces fit.
const maxWinsize = 64

// watchWinsize resizes t's terminals to the size written into DIR/winsize,
// until done is closed. The directory is watched through its descriptor
// (the /proc/self/fd link names the opened directory, not a path that
// could be swapped), so the file may be written in place, made, or renamed
// there. It is read with Dir.OpenFile: a regular file, no link followed.
// Text that does not parse is ignored, logged once for as long as the file
// holds it; an empty file is not a size yet and ignored quietly.
func (t *terminal) watchWinsize(dir *fifo.Dir, done <-chan struct{}) {
	log := t.cfg.Log
	w, err := fifo.NewWatcher()
	if err != nil {
		log.Warn("cannot watch for window sizes: "+winsizeName+" is not read", "err", err)
		return
	}
	defer w.Close()
	if _, err := w.Add(fmt.Sprintf("/proc/self/fd/%d", dir.Fd()), winsizeEvents); err != nil {
		log.Warn("cannot watch for window sizes: "+winsizeName+" is not read", "dir", dir.Path(), "err", err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // done ends the wait for events
		defer wg.Done()
		select {
		case <-done:
			cancel()
		case <-ctx.Done():
		}
	}()
	defer wg.Wait()
	defer cancel()
	bad := "" // the text last logged as not a size
	for {
		evs, err := w.Next(ctx)
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			log.Warn("cannot watch for window sizes any more: "+winsizeName+" is not read", "err", err)
			return
		}
		for _, ev := range evs {
			// An overflow of the event queue may have lost one for the file.
			if ev.Name == winsizeName && ev.Mask&winsizeEvents != 0 || ev.Mask&unix.IN_Q_OVERFLOW != 0 {
				bad = t.applyWinsize(dir, bad)
				break
			}
		}
	}
}

// winsizeEvents are the events of DIR that may bring a new size: the
// file written (IN_MODIFY), made, or renamed there.
const winsizeEvents = unix.IN_MODIFY | unix.IN_CREATE | unix.IN_MOVED_TO

// applyWinsize resizes the terminals to the size in DIR/winsize. What
// cannot be used is logged unless it is bad, what was logged last; it
// returns what it logged, or "" after a size was applied.
func (t *terminal) applyWinsize(dir *fifo.Dir, bad string) string {
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
	size, err := child.ParseWinsize(text)
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
func readWinsize(dir *fifo.Dir) (string, error) {
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
