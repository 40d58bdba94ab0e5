//go:build linux

package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/ttytext"
	"github.com/fifobridge/fifobridge/protocol"
)

// This file is the fan-out of the child's output to its watchers (op
// watch): each gets its own copy of what the child writes from the
// moment its watch is accepted, through its own reply FIFO, from its own
// writer (watcher.go). The copy of the child's output offers every chunk
// to every watcher, which never waits: a watcher that does not keep up
// loses bytes, and is told how many, but slows neither the child, nor
// the output FIFO, nor an asker, nor another watcher. On pipes the output
// passes through the agent only while a watcher (or the first run's
// judge) wants it: otherwise it is spliced, as before any watch.
//
// A watch follows the child that runs when it begins (or, begun between
// a child's end and its restart, the restarted one) and ends with it:
// once that child's output is all offered, an exit frame with its status
// closes the watch, as `docker attach` ends with its container; a
// restarted child needs a new watch. A watch still open when the engine
// stops (a session's close, -session-idle, the agent's stop) ends with a
// closed frame, code 0.

// maxWatchers bounds the watches of one child at once; one more is
// refused.
const maxWatchers = 64

// fanout is the engine's watchers: those whose watch goes on are in set,
// and are offered the output; a watcher whose watch is over leaves set
// at once, its writer still writing its last frames. Every watcher's
// goroutines are counted in wg, which the engine's Run waits for.
type fanout struct {
	rule *bound.Rule // how long writes to a watcher wait
	log  *slog.Logger
	poke func() // the status changed: it counts the watchers
	wg   sync.WaitGroup
	n    atomic.Int32 // len(set), looked at by the copy without the lock

	mu     sync.Mutex
	set    map[*watcher]struct{}
	closed bool // the engine stops: no watch is accepted any more
}

func newFanout(stopTimeout time.Duration, log *slog.Logger, poke func()) *fanout {
	if poke == nil {
		poke = func() {}
	}
	return &fanout{rule: bound.NewRule(stopTimeout), log: log, poke: poke, set: map[*watcher]struct{}{}}
}

var (
	errWatchClosed     = errors.New("the child's stream is closing: nothing more to watch")
	errTooManyWatchers = fmt.Errorf("too many watchers (at most %d at once)", maxWatchers)
)

// add accepts the watch id on reply, which it takes over, cleaning the
// output when clean; pid is the child started last.
func (f *fanout) add(id string, reply *fifo.Reply, clean bool, pid int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.closed:
		return errWatchClosed
	case len(f.set) >= maxWatchers:
		return errTooManyWatchers
	}
	w := &watcher{fan: f, id: id, pid: pid, reply: reply, w: f.rule.NewWriter(reply), began: time.Now()}
	w.more.L = &w.mu
	if clean {
		w.clean = &ttytext.Cleaner{}
	}
	f.set[w] = struct{}{}
	f.n.Store(int32(len(f.set)))
	w.serve()
	f.log.Info("watch begun", "id", id, "watchers", len(f.set), "raw", !clean)
	f.poke()
	return nil
}

// any reports whether a watch goes on.
func (f *fanout) any() bool { return f != nil && f.n.Load() > 0 }

// count is how many watches go on, for the status file.
func (f *fanout) count() int {
	if f == nil {
		return 0
	}
	return int(f.n.Load())
}

// offer gives p, output of the child, to every watcher, none of which
// waits; p is not kept.
func (f *fanout) offer(p []byte) {
	if !f.any() {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for w := range f.set {
		w.offer(p)
	}
}

// childEnded ends every watch with the exit frame of st, the status of
// the child that ended, once all its output was offered.
func (f *fanout) childEnded(st child.ExitStatus) {
	f.endAll(func(w *watcher) []byte {
		x := protocol.Exit{Code: st.Code(), Signal: child.SignalName(st.Signal()), DurationMS: time.Since(w.began).Milliseconds()}
		return protocol.AppendExit(nil, w.id, x)
	})
}

// close refuses every later watch and ends those that go on with a
// closed frame, code 0: the engine stops.
func (f *fanout) close() {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	f.endAll(func(w *watcher) []byte { return protocol.AppendClosed(nil, w.id, 0) })
}

// endAll ends every watch that goes on with the frame last gives it.
func (f *fanout) endAll(last func(*watcher) []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for w := range f.set {
		w.end(last(w))
	}
	if len(f.set) > 0 {
		defer f.poke()
	}
	clear(f.set)
	f.n.Store(0)
}

// remove forgets w, whose writer is done, if its watch still went on.
func (f *fanout) remove(w *watcher) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.set[w]; ok {
		delete(f.set, w)
		f.n.Store(int32(len(f.set)))
		defer f.poke()
	}
}

// stopWhenDone begins the stop of the watchers' rule once ctx is done, so
// that their last frames are given up at the stop's deadline. It starts
// no goroutine until then (context.AfterFunc: an idle engine runs none);
// the returned function undoes it, or waits until it has run.
func (f *fanout) stopWhenDone(ctx context.Context) func() {
	ran := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(ran)
		f.rule.Stop()
	})
	return func() {
		if !stop() {
			<-ran
		}
	}
}

// finish ends the watches that go on (closed frames) and waits until
// every watcher's writer is done, their last frames written or given up
// at the stop's deadline.
func (f *fanout) finish() {
	f.close()
	f.rule.Stop()
	f.wg.Wait()
}

// Watch follows the child's output from now on for the watch id, on
// reply, which it takes over when it returns nil: the output of a child
// on a terminal is cleaned as an ask's answer is (escape sequences and
// the carriage returns of "\r\n" removed) unless raw. Watching is
// reading: the user that owns reply must be one whom the output FIFO's
// mode lets read it (root may); otherwise, as when the engine stops or
// maxWatchers watch already, it returns why, and reply is the caller's.
func (s *Engine) Watch(id string, reply *fifo.Reply, raw bool) error {
	if err := s.mayWatch(reply); err != nil {
		return err
	}
	if err := s.watch.add(id, reply, s.tty != nil && !raw, s.Pid()); err != nil {
		return err
	}
	s.wakeCopy()
	return nil
}

// mayWatch says whether the owner of reply may read the output FIFO, by
// its mode, owner and group. That the owner is in a group is shown by
// the reply FIFO's group: a user can give a file only a group it is in,
// and DIR/replies, made by the agent without the setgid bit, gives a new
// FIFO its maker's group.
func (s *Engine) mayWatch(reply *fifo.Reply) error {
	out, err := s.sink.Describe()
	if err != nil {
		return fmt.Errorf("watch: the output fifo: %w", err)
	}
	uid, gid := reply.Owner()
	if !out.MayRead(uid, gid) {
		return fmt.Errorf("watch refused: watching is reading, and the output fifo %s (uid %d, gid %d, mode %04o) does not let uid %d of gid %d read it",
			s.sink.Path(), out.Uid, out.Gid, out.Mode&0o7777, uid, gid)
	}
	return nil
}

// setPiped records w as the wiring whose copy wakeCopy wakes (nil: none).
func (s *Engine) setPiped(w *wiring) {
	s.pipedMu.Lock()
	s.piped = w
	s.pipedMu.Unlock()
}

// wakeCopy makes the copy of a child on pipes look again whether its
// output must pass through the agent, now that a watch began: a splice
// waiting for the child's output gives way (its read deadline passes), so
// that what the child writes from now on reaches the watcher. The copies
// that read the output into the agent anyway (a terminal, a
// conversation, -tee) offer it to the watchers already.
func (s *Engine) wakeCopy() {
	s.pipedMu.Lock()
	w := s.piped
	s.pipedMu.Unlock()
	if w == nil {
		return
	}
	w.wake.Lock()
	defer w.wake.Unlock()
	if !w.unwiring.Load() {
		w.watchCame = true
		w.spin.SetReadDeadline(time.Unix(1, 0))
	}
}

// watched reports whether a watch woke the copy's wait (wakeCopy), and
// if so lets the copy wait again: its read deadline is cleared, unless
// unwire has set it since.
func (w *wiring) watched() bool {
	w.wake.Lock()
	defer w.wake.Unlock()
	if !w.watchCame {
		return false
	}
	w.watchCame = false
	if w.unwiring.Load() {
		return false
	}
	w.spin.SetReadDeadline(time.Time{})
	return true
}
