//go:build linux

// Package follow keeps the agent's FIFO ends on the FIFOs their paths
// name: a FIFO replaced by someone else is served in place of the old one
// (an input FIFO that users other than the agent's may read is named in
// the log), and with -create a missing one is made again, with its End's
// mode. Entries are looked at through their directory's descriptor, never
// following a link. A FIFO of the agent's user serves one end for the
// agent's life (Roles): one that another end serves or served is not
// taken, whatever its name now.
package follow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/sharedir"
)

// followInterval is how often the FIFO paths are looked at for a replaced
// or missing FIFO. Looking (two lstat calls) is cheaper than inotify here:
// closing an inotify descriptor takes the kernel tens of milliseconds, which
// every exit would pay. Each look wakes an idle agent, and a wake-up of the
// Go runtime costs a few hundred microseconds of CPU on a virtual machine:
// once a second keeps an idle agent under a millisecond of CPU a second,
// and a writer of a replaced FIFO waits at most that long for its reader.
const followInterval = time.Second

// remakeDelay is how long a FIFO may be missing before the agent (with
// Create) makes it again. Someone who removes a FIFO to replace it has this
// long to make theirs, so their mkfifo does not fail for ours.
const remakeDelay = time.Second

// Reopener is a FIFO end that follows its path: fifo.Source and fifo.Sink.
type Reopener interface {
	Reopen(create bool, perm os.FileMode, accept func(fifo.Info) error) (changed, created bool, err error)
}

// End is one FIFO end and the entry, name in Dir, that it follows; Path
// names it in the log.
type End struct {
	Dir  *sharedir.Dir
	Name string
	Path string
	FIFO Reopener
	// Mode is the mode of the FIFO made again (see fifo.InputMode).
	Mode os.FileMode
	// Input says the FIFO carries requests: a new one that users other
	// than the agent's may read is named in the log.
	Input bool
	// Role is what the end serves (RoleIn, RoleOut, RoleAsk), for Roles.
	Role string
}

// Options says how Ends remakes and reports.
type Options struct {
	Create bool // make a missing FIFO again
	Log    *slog.Logger
	// Sink, when one of the ends, gets the bytes left in a replaced FIFO
	// moved at once.
	Sink *fifo.Sink
	// Created, if set, is told of every FIFO made again, to be removed at
	// exit.
	Created func(d *sharedir.Dir, name string)
	// Roles, if set, must accept every FIFO an end takes (Roles.Claim),
	// and Changed, if set, is told after an end took one: the status file
	// names the input FIFOs served.
	Roles   *Roles
	Changed func()
}

// Ends keeps each end on the FIFO its entry names until ctx is done: a
// replaced FIFO is served in place of the old one, and with o.Create a
// missing one is made again after remakeDelay (and given to o.Created).
// Entries are looked at with fstatat relative to their directory's
// descriptor, never following a link, and remade with mkfifoat there
// (sharedir.Dir.Make).
func Ends(ctx context.Context, ends []End, o Options) {
	var wg sync.WaitGroup
	defer wg.Wait()
	reported := map[string]bool{} // paths whose wrong content was logged
	var carry carrier
	reopen := func(f End, create bool) {
		var accept func(fifo.Info) error
		if o.Roles != nil {
			accept = func(i fifo.Info) error { return o.Roles.Claim(f.Role, i) }
		}
		changed, made, err := f.FIFO.Reopen(create, f.Mode, accept)
		if made && o.Created != nil {
			o.Created(f.Dir, f.Name) // even if not served: it is the agent's to remove
		}
		switch {
		case err != nil && !errors.Is(err, fifo.ErrClosed):
			if !reported[f.Path] {
				o.Log.Error("cannot serve what the fifo path now names; still serving the old fifo", "path", f.Path, "err", err)
				reported[f.Path] = true
			}
			return
		case changed:
			o.Log.Info("fifo replaced; serving the new one", "path", f.Path, "created", made)
			if o.Changed != nil {
				o.Changed()
			}
			warnReaders(o.Log, f)
			if o.Sink != nil && f.FIFO == Reopener(o.Sink) {
				// Output waiting in the old FIFO moves now, not with the
				// child's next write; closing the sink ends the wait.
				carry.start(&wg, o.Sink)
			}
		}
		reported[f.Path] = false
	}

	t := time.NewTicker(followInterval)
	defer t.Stop()
	missing := map[string]time.Time{} // since when
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for _, f := range ends {
			_, err := f.Dir.Stat(f.Name)
			switch {
			case !errors.Is(err, os.ErrNotExist):
				delete(missing, f.Path)
				reopen(f, false)
			case missing[f.Path].IsZero():
				missing[f.Path] = time.Now()
			case o.Create && time.Since(missing[f.Path]) >= remakeDelay-followInterval/2:
				// Missing at two looks a followInterval apart: missing
				// for remakeDelay, give or take the ticker's jitter.
				reopen(f, true)
				delete(missing, f.Path)
			}
		}
	}
}

// warnReaders logs a warning when f is an input FIFO that users other than
// the agent's may read: someone replaced it with a FIFO of their own, or
// of a mode that lets others read the requests and learn their reply
// FIFOs' names.
func warnReaders(log *slog.Logger, f End) {
	if !f.Input {
		return
	}
	if st, err := f.Dir.Stat(f.Name); err == nil && fifo.OthersMayRead(&st, os.Geteuid()) {
		log.Warn("input fifo readable by other users: they can read the requests and the names of their reply fifos",
			"path", f.Path, "mode", fmt.Sprintf("%04o", st.Mode&0o7777), "uid", st.Uid)
	}
}

// carrier runs a Sink's CarryOver in one goroutine at a time. While
// nobody reads the output FIFO, a write to the Sink waits, and so does
// every CarryOver: one goroutine each time the FIFO was replaced would
// pile up for as long as nobody reads. One that runs, or waits to, moves
// the bytes of every FIFO replaced before it takes the Sink; one more
// round follows when a FIFO was replaced while it ran.
type carrier struct {
	mu      sync.Mutex
	running bool // a goroutine runs CarryOver, or is about to
	again   bool // a FIFO was replaced since it began
}

// start has s carry over the bytes of its replaced FIFOs, in a goroutine
// that wg counts, unless one runs already; it then makes one more round.
func (c *carrier) start(wg *sync.WaitGroup, s *fifo.Sink) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		c.again = true
		return
	}
	c.running = true
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			s.CarryOver()
			c.mu.Lock()
			if !c.again {
				c.running = false
				c.mu.Unlock()
				return
			}
			c.again = false
			c.mu.Unlock()
		}
	}()
}
