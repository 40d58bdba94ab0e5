//go:build linux

// Package follow keeps the agent's FIFO ends on the FIFOs their paths
// name: a FIFO replaced by someone else is served in place of the old one
// (an input FIFO that users other than the agent's may read is named in
// the log), and with -create a missing one is made again, with its End's
// mode. Entries are looked at through their directory's descriptor, never
// following a link. A FIFO of the agent's user serves one end for the
// agent's life (Roles): one that another end serves or served is not
// taken, whatever its name now.
//
// Following costs nothing while nothing changes: each directory that
// holds followed FIFOs is watched (inotify, through the agent's one
// instance, package watch), and the ends are looked at when an entry
// there is made, removed or renamed. No goroutine runs and no timer is
// armed for a follower meanwhile. A timer runs only while something is
// amiss: while a FIFO is missing (with Create it is made again once it
// was missing for remakeDelay) and while the last look failed (looked at
// again every retryInterval). Where inotify cannot be had (the user's
// inotify limits are reached, /proc is missing), and for a directory
// whose watch ended (it was removed), the follower looks every
// pollInterval instead, as it did before it had a watch.
package follow

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/watch"
	"github.com/fifobridge/fifobridge/sharedir"
)

// remakeDelay is how long a FIFO may be missing before the agent (with
// Create) makes it again. Someone who removes a FIFO to replace it has this
// long to make theirs, so their mkfifo does not fail for ours.
const remakeDelay = time.Second

// retryInterval is how soon ends are looked at again after a look that
// failed (a FIFO that could not be opened, served or made): nothing in
// the directory needs to change for that to pass (descriptors freed,
// replaced FIFOs emptied).
const retryInterval = time.Second

// pollInterval is how often the ends are looked at without a watch.
const pollInterval = time.Second

// entryEvents are the changes of a directory's entries that may change
// what a followed name is, or who may read it (IN_ATTRIB: a chmod). Data
// written into the FIFOs (IN_MODIFY) is not among them.
const entryEvents = unix.IN_CREATE | unix.IN_DELETE | unix.IN_MOVED_FROM | unix.IN_MOVED_TO | unix.IN_ATTRIB |
	unix.IN_DELETE_SELF | unix.IN_MOVE_SELF

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

// Ends keeps each end on the FIFO its entry names until ctx is done (see
// Start).
func Ends(ctx context.Context, ends []End, o Options) {
	f := Start(ends, o)
	<-ctx.Done()
	f.Stop()
}

// Follower keeps ends on their FIFOs from Start to Stop.
type Follower struct {
	ends []End
	o    Options
	look *watch.Runner // runs one look at a time, in a goroutine of its own

	// The look's own, one look at a time:
	reported map[string]bool      // paths whose wrong content was logged
	missing  map[string]time.Time // since when
	readable map[string]uint64    // input paths others may read: the inode warned of
	looked   bool                 // the first look is over
	carry    carrier
	wg       sync.WaitGroup // the carrier's goroutine

	mu      sync.Mutex
	watches []*watch.Watch
	poll    bool        // some directory has no watch: look every pollInterval
	timer   *time.Timer // the next look without an event, once made
	due     bool        // the timer is armed
	stopped bool
}

// Start keeps each end on the FIFO its entry names until Stop: a replaced
// FIFO is served in place of the old one, and with o.Create a missing one
// is made again after remakeDelay (and given to o.Created). Entries are
// looked at with fstatat relative to their directory's descriptor, never
// following a link, and remade with mkfifoat there (sharedir.Dir.Make):
// once now, and then whenever an entry of their directory changed (see
// the package doc).
func Start(ends []End, o Options) *Follower {
	f := &Follower{ends: ends, o: o, reported: map[string]bool{}, missing: map[string]time.Time{}, readable: map[string]uint64{}}
	f.look = watch.NewRunner(f.lookAll)
	f.watchDirs()
	f.look.Kick() // what changed before the watches were there
	return f
}

// watchDirs watches the directory of every end, once each.
func (f *Follower) watchDirs() {
	f.mu.Lock()
	defer f.mu.Unlock()
	names := map[*sharedir.Dir]map[string]bool{} // the followed entries of each directory
	var dirs []*sharedir.Dir
	for _, e := range f.ends {
		if names[e.Dir] == nil {
			names[e.Dir] = map[string]bool{}
			dirs = append(dirs, e.Dir)
		}
		names[e.Dir][e.Name] = true
	}
	for _, d := range dirs {
		followed := names[d]
		w, err := d.Notify(entryEvents, func(ev watch.Event) { f.event(ev, followed) })
		if err != nil {
			f.o.Log.Debug("following fifos by looking every second: no watch", "err", err)
			f.poll = true
			continue
		}
		f.watches = append(f.watches, w)
	}
}

// event is told of each change of a watched directory, whose followed
// entries are named in followed, on the watch's reader. It only kicks a
// look, and only for a change of a followed entry (not of the status file
// written next to DIR/in), of the directory itself, or of what may be
// anything (an overflow). A watch that ended (the directory went) leaves
// the follower looking every pollInterval.
func (f *Follower) event(ev watch.Event, followed map[string]bool) {
	if ev.Mask&unix.IN_IGNORED != 0 {
		f.mu.Lock()
		f.poll = true
		f.mu.Unlock()
	}
	if ev.Name == "" || followed[ev.Name] {
		f.look.Kick()
	}
}

// Stop ends the follower and waits for the look and the carrying of bytes
// under way.
func (f *Follower) Stop() {
	f.mu.Lock()
	f.stopped = true
	if f.timer != nil {
		f.timer.Stop()
	}
	watches := f.watches
	f.watches = nil
	f.mu.Unlock()
	for _, w := range watches {
		w.Remove()
	}
	f.look.Stop()
	f.wg.Wait()
}

// lookAll looks at every end once, and arms the timer for the next look
// without an event, if one is due: a FIFO missing, a look that failed, a
// directory without a watch.
func (f *Follower) lookAll() {
	now := time.Now()
	var next time.Duration // 0: none
	due := func(d time.Duration) {
		if next == 0 || d < next {
			next = max(d, time.Millisecond)
		}
	}
	for _, e := range f.ends {
		_, err := e.Dir.Stat(e.Name)
		switch {
		case !errors.Is(err, os.ErrNotExist):
			delete(f.missing, e.Path)
			if !f.reopen(e, false) {
				due(retryInterval)
			}
		case !f.o.Create:
			// Served again once it is made: an event.
		case f.missing[e.Path].IsZero():
			f.missing[e.Path] = now
			due(remakeDelay)
		case now.Sub(f.missing[e.Path]) >= remakeDelay:
			delete(f.missing, e.Path)
			if !f.reopen(e, true) {
				due(retryInterval)
			}
		default:
			due(remakeDelay - now.Sub(f.missing[e.Path]))
		}
	}
	f.looked = true
	f.arm(next)
}

// arm has the ends looked at again in d (0: only at an event, and the
// timer is stopped), or every pollInterval where a directory has no
// watch.
func (f *Follower) arm(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.poll && (d == 0 || d > pollInterval) {
		d = pollInterval
	}
	f.due = d != 0 && !f.stopped
	switch {
	case !f.due && f.timer != nil:
		f.timer.Stop()
	case !f.due:
	case f.timer == nil:
		f.timer = time.AfterFunc(d, f.look.Kick)
	default:
		f.timer.Reset(d)
	}
}

// reopen has e serve what its entry names now (made first, with create),
// and reports whether that went well.
func (f *Follower) reopen(e End, create bool) bool {
	o := f.o
	var accept func(fifo.Info) error
	if o.Roles != nil {
		accept = func(i fifo.Info) error { return o.Roles.Claim(e.Role, i) }
	}
	changed, made, err := e.FIFO.Reopen(create, e.Mode, accept)
	if made && o.Created != nil {
		o.Created(e.Dir, e.Name) // even if not served: it is the agent's to remove
	}
	switch {
	case errors.Is(err, fifo.ErrClosed):
		return true
	case err != nil:
		if !f.reported[e.Path] {
			o.Log.Error("cannot serve what the fifo path now names; still serving the old fifo", "path", e.Path, "err", err)
			f.reported[e.Path] = true
		}
		return false
	case changed:
		o.Log.Info("fifo replaced; serving the new one", "path", e.Path, "created", made)
		if o.Changed != nil {
			o.Changed()
		}
		if o.Sink != nil && e.FIFO == Reopener(o.Sink) {
			// Output waiting in the old FIFO moves now, not with the
			// child's next write; closing the sink ends the wait.
			f.carry.start(&f.wg, o.Sink)
		}
	}
	f.reported[e.Path] = false
	f.warnReaders(e, changed)
	return true
}

// warnReaders logs a warning when e is an input FIFO that users other than
// the agent's may read, once per FIFO and for as long as they may:
// someone replaced it with a FIFO of their own, or one of (or changed its
// mode to) a mode that lets others read the requests and learn their
// reply FIFOs' names. changed says e serves it from now on. A FIFO e
// served already at the first look is the agent's start's to warn of
// (bridge), not the follower's.
func (f *Follower) warnReaders(e End, changed bool) {
	if !e.Input {
		return
	}
	st, err := e.Dir.Stat(e.Name)
	if err != nil || !fifo.OthersMayRead(&st, os.Geteuid()) {
		delete(f.readable, e.Path)
		return
	}
	if f.readable[e.Path] == st.Ino {
		return
	}
	f.readable[e.Path] = st.Ino
	if f.looked || changed {
		f.o.Log.Warn("input fifo readable by other users: they can read the requests and the names of their reply fifos",
			"path", e.Path, "mode", fmt.Sprintf("%04o", st.Mode&0o7777), "uid", st.Uid)
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
