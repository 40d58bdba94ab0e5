//go:build linux

package stream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/bridge/internal/idle"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/pipeio"
	"github.com/fifobridge/fifobridge/status"
	"golang.org/x/sys/unix"
)

// Engine is one stream child: one supervised child, restarted by policy,
// wired to the same FIFOs each time.
type Engine struct {
	cfg    *Config
	reaper *child.Reaper
	src    *fifo.Source
	sink   *fifo.Sink
	poke   func() // the status changed

	sup  *child.Supervisor
	feed *feeder
	idle *idle.Clock // input bytes, for -idle-timeout
	tee  *teeOut     // -tee: the copy on the agent's stdout, or nil
	cur  *wiring
	ctx  context.Context // of run; done means stopping

	tty *terminal // with -tty, what replaces feed and cur

	first *firstRun // Config.FirstRun's judge of the first child, or nil

	// talk is the conversation of -prompt (converse.go), which takes the
	// child's output and keeps the output FIFO as a transcript; quiet
	// without one.
	talk talk

	// watch is the child's watchers (watch.go), offered its output.
	watch *fanout
	// piped is the wiring of the child on pipes while its output is
	// copied, for wakeCopy; under pipedMu.
	pipedMu sync.Mutex
	piped   *wiring

	// Events (events.go).
	ready     chan struct{} // closed once the child is past its start
	readyOnce sync.Once
	pid       atomic.Int64 // the child started last
}

// New returns stream mode serving src and sink with cfg; poke is told
// whenever the status changed. Run serves.
func New(cfg *Config, reaper *child.Reaper, src *fifo.Source, sink *fifo.Sink, poke func()) *Engine {
	clock := idle.NewClock()
	s := &Engine{cfg: cfg, reaper: reaper, src: src, sink: sink, poke: poke, feed: newFeeder(src, clock), idle: clock, talk: quiet{},
		watch: newFanout(cfg.StopTimeout, cfg.Log, poke), ready: make(chan struct{})}
	if cfg.Conversation != nil {
		s.talk = s.converse()
	}
	s.feed.typed = s.talk.Typed
	if cfg.Conversation != nil {
		s.first = newFirstRun(cfg, s.talk.Readied, nil) // Ready is the conversation's to tell
	} else {
		s.first = newFirstRun(cfg, nil, s.markReady)
	}
	s.sup = &child.Supervisor{
		Reaper:      reaper,
		Log:         cfg.Log,
		Start:       s.start,
		Exited:      s.exited,
		Changed:     poke,
		Policy:      cfg.Restart,
		MaxRestarts: cfg.MaxRestarts,
		Window:      cfg.RestartWindow,
		BackoffMin:  cfg.BackoffMin,
		BackoffMax:  cfg.BackoffMax,
		StopSignal:  cfg.StopSignal,
		StopTimeout: cfg.StopTimeout,
	}
	if cfg.Tee {
		var err error
		if s.tee, err = newTeeOut(cfg.Log); err != nil {
			cfg.Log.Warn("no -tee copy: stdout cannot be used", "err", err)
		}
	}
	if s.first != nil {
		s.sup.GiveUp = s.first.judge
	}
	if cfg.Tty {
		s.tty = newTerminal(cfg, src, sink, poke, clock)
		s.tty.tee, s.tty.talk, s.tty.first, s.tty.running, s.tty.watch = s.tee, s.talk, s.first, s.running, s.watch
		s.sup.Hangup = func(p *child.Process) { s.tty.hangup(reaper, p) }
	}
	return s
}

// wiring is what connects one child to the FIFOs.
type wiring struct {
	stdin, back *os.File            // stdin pipe: the agent's end, and the one it takes leftovers back from (stdin itself, see pipeio.Input)
	stdout      *os.File            // stdout pipe: agent's read end
	spin        *pipeio.ReadSpinner // waits for stdout; its read deadline is set through it
	taking      sync.Mutex          // held by readOut from a read of stdout until its bytes are taken
	copied      chan struct{}       // closed when stdout is copied to its end
	unwiring    atomic.Bool         // unwire asked copyOut to finish
	wake        sync.Mutex          // held while stdout's read deadline is set for unwire or a watch
	watchCame   bool                // under wake: a watch began; the splice under way gives way (wakeCopy)
	stderr      *stderrCopy         // the first child's stderr, when it is the agent's; or nil
}

// newWiring is the wiring of a child's pipes: stdin, the agent's end of
// its stdin, back, where the bytes the child left in that pipe are taken
// back from (stdin itself where pipeio.Input could open it for both),
// and stdout, the agent's end of its stdout.
func newWiring(stdin, back, stdout *os.File) *wiring {
	return &wiring{stdin: stdin, back: back, stdout: stdout, spin: pipeio.NewReadSpinner(stdout), copied: make(chan struct{})}
}

// Run serves until the child ends for good or ctx is done. It closes src and
// sink, and returns after every goroutine it started has ended. Its error
// is a failed start: the child's (a *child.StartError), or with
// Config.FirstRun a first run that failed as one (a *FirstRunError).
func (s *Engine) Run(ctx context.Context) (child.ExitStatus, error) {
	cfg := s.cfg
	// No input byte and no ask waiting or in its turn for -idle-timeout: a
	// stop.
	ctx, stopIdle := s.idle.StopWhenIdle(ctx, cfg.IdleTimeout, cfg.Log, s.talk.Busy)
	defer stopIdle()
	s.ctx = ctx
	defer s.watch.stopWhenDone(ctx)() // a stop gives the watchers' last frames its deadline

	var wg sync.WaitGroup
	done := make(chan struct{})
	if s.tty != nil {
		s.serveTerminal(&wg)
	} else {
		wg.Add(1)
		go func() { defer wg.Done(); s.feed.run() }()
	}
	var teeWG sync.WaitGroup
	if s.tee != nil {
		teeWG.Add(1)
		go func() { defer teeWG.Done(); s.tee.run() }()
		defer func() { s.tee.close(); teeWG.Wait(); s.tee.done() }()
	}

	s.talk.Start(ctx)
	st, err := s.sup.Run(ctx)
	s.first.wait()
	if ferr := s.first.err(); err == nil && ferr != nil {
		err = ferr
	}

	s.talk.Stop()
	close(done)
	s.feed.close()
	if s.tty != nil {
		s.tty.close()
	}
	s.src.Close()  // wakes the feeder's Read
	s.sink.Close() // ends a write of the transcript waiting for a reader
	wg.Wait()
	s.talk.Wait()
	s.watch.finish()
	if n := s.feed.held() + s.heldByTerminal(); n > 0 {
		cfg.Log.Warn("input not delivered: no child left to take it", "bytes", n)
	}
	return st, err
}

// Signal sends sig to the running child's foreground: the foreground
// process group of its terminal (-tty), else its process group. It fails
// when no child runs (between a child's end and its restart).
func (s *Engine) Signal(sig syscall.Signal) error {
	if s.tty == nil {
		if err := s.sup.Signal(sig); err != nil {
			if errors.Is(err, os.ErrProcessDone) {
				return errNoChild
			}
			return err
		}
		return nil
	}
	pg, err := s.tty.foreground()
	if err != nil {
		return err
	}
	if err := unix.Kill(-pg, sig); err != nil {
		return fmt.Errorf("signal process group %d: %w", pg, err)
	}
	s.cfg.Log.Info("sent signal to the terminal's foreground group", "signal", child.SignalName(sig), "pgid", pg)
	return nil
}

// errNoChild is what Signal says between a child's end and its restart.
var errNoChild = errors.New("no child runs now")

// Forward passes sig, a signal the agent forwards, to the running
// child's process group, without waiting: between a child's end and its
// restart there is none to take it, and it is dropped.
func (s *Engine) Forward(sig syscall.Signal) { s.sup.Signal(sig) }

// start starts one child; the first is watched as Config.FirstRun says,
// and without a conversation or FirstRun its start is Ready.
func (s *Engine) start() (*child.Process, error) {
	s.talk.Started() // before any output: the first prompt counts
	first := s.first.begin()
	var p *child.Process
	var alive *childReader
	var err error
	if s.tty != nil {
		p, alive, err = s.tty.start(s.reaper, s.cfg.Child, s.ctx.Done(), first)
	} else {
		p, alive, err = s.startPiped(first)
	}
	if err != nil {
		return nil, err
	}
	if first {
		s.first.watch(p, alive)
	}
	if s.cfg.Conversation == nil && s.first == nil {
		s.markReady()
	}
	return p, nil
}

// startPiped starts one child on fresh pipes and wires them to the FIFOs.
// The first child (first) also gets a reader that sees it wait for its
// input, when no conversation has one (see firstrun.go), and its stderr
// is copied when it is the agent's (stderrcopy.go).
func (s *Engine) startPiped(first bool) (*child.Process, *childReader, error) {
	stdin, back, childIn, err := pipeio.Input()
	if err != nil {
		return nil, nil, err
	}
	closeIn := func() {
		stdin.Close()
		childIn.Close()
	}
	stdout, childOut, err := pipeio.Pipe(true)
	if err != nil {
		closeIn()
		return nil, nil, err
	}
	pipeio.Grow(stdin) // a stream's pipes get large buffers; a request's need none
	pipeio.Grow(stdout)
	w := newWiring(stdin, back, stdout)
	r := &childReader{out: stdout, taking: &w.taking}
	if s.cfg.Conversation != nil || first {
		r.probe = newProbe(stdin, s.cfg.Log, s.cfg.Conversation != nil) // the conversation's, or the first run's
	}
	p, err := s.reaper.Start(s.pipedSpec(w, childIn, childOut, first))
	childOut.Close() // the child has it; holding it would hide its EOF
	if err != nil {
		closeIn()
		stdout.Close()
		w.stderr.abandon()
		return nil, nil, err
	}
	if back != childIn {
		childIn.Close() // the child has it; stdin takes leftovers back
	}
	s.running(p.Pid)
	r.pgid = p.Pid
	alive := r // without a conversation, the first run's
	if s.cfg.Conversation != nil {
		reading(s.talk, r)
		alive = nil
	}
	w.stderr.start(s.first)
	s.setPiped(w)
	go func() {
		defer close(w.copied)
		s.copyOut(w)
		s.talk.OutputEnded()
	}()
	s.feed.attach(stdin, back, w.spin)
	s.cur = w
	return p, alive, nil
}

// pipedSpec is how a child starts on pipes: childIn and childOut are its
// stdin and stdout; its stderr is the agent's, or childOut with -stderr
// out, or for the first child a pipe that the agent copies to its own
// stderr (w.stderr, see stderrcopy.go).
func (s *Engine) pipedSpec(w *wiring, childIn, childOut *os.File, first bool) child.Spec {
	spec := s.cfg.Child
	spec.Terminal = s.cfg.Terminal // one child at a time: it may have the terminal
	spec.Stdin, spec.Stdout, spec.Stderr = childIn, childOut, os.Stderr
	if s.cfg.Conversation != nil {
		spec.Signals = interruptible(spec.Signals)
	}
	switch {
	case s.cfg.StderrOut:
		spec.Stderr = childOut // one pipe: the child's own order is kept
	case first:
		c, err := newStderrCopy(os.Stderr, bound.Patience(s.cfg.StopTimeout), s.cfg.Log)
		if err != nil {
			s.cfg.Log.Warn("the first child's stderr is not watched: only its output is", "err", err)
			break
		}
		w.stderr, spec.Stderr = c, c.w
	}
	return spec
}

// copyOut moves the child's stdout to the output FIFO with splice(2) until
// EOF, or until unwire asks it to finish; then it copies what is still in
// the pipe. Any other error is tried again, as readRetry says: stopping
// would leave the child blocked on a full stdout. Should the copy give up,
// it closes its end of the pipe, so that the child's writes fail rather
// than wait for a reader that is gone.
func (s *Engine) copyOut(w *wiring) {
	if s.cfg.Conversation != nil {
		s.copyConverse(w)
		return
	}
	if s.tee != nil {
		s.copyTee(w)
		return
	}
	retry := readRetry{log: s.cfg.Log, what: "moving the child's output"}
	defer retry.end()
	for {
		if s.throughAgent() && !s.copyRead(w) {
			return
		}
		_, err := s.sink.SpliceFrom(w.stdout, pipeio.PipeSize)
		if errors.Is(err, fifo.ErrClosed) {
			s.cfg.Log.Warn("output dropped: the agent is stopping and no reader took it")
			return
		}
		if next := w.afterRead(&retry, err); next == readStop {
			return
		} else if next == readDrain {
			break
		}
	}
	if left := fifo.Drain(w.stdout); len(left) > 0 {
		if _, err := s.sink.Write(left); err != nil {
			s.cfg.Log.Warn("output dropped: the agent is stopping and no reader took it", "err", err)
		}
	}
}

// throughAgent says whether the output of a child on pipes must pass
// through the agent rather than be spliced: the first run is watched
// (firstrun.go), or watchers follow the child (watch.go).
func (s *Engine) throughAgent() bool { return s.first.watching() || s.watch.any() }

// copyRead is copyOut while the output must pass through the agent
// (throughAgent): the child's stdout is read into the agent, shown to
// the first run's judge, offered to the watchers and written to the
// output FIFO, until neither wants it. It reports whether copyOut goes
// on (it splices from then on), or the copy ended as copyTee's does.
// Chunks are of watchChunk for the first run alone, so that the copy
// holds little once it is over, and larger for watchers.
func (s *Engine) copyRead(w *wiring) (more bool) {
	size := watchChunk
	if s.watch.any() {
		size = pipeio.PipeSize / 4
	}
	s.readOut(w, size, func(p []byte) bool {
		s.first.output(p)
		s.watch.offer(p)
		if _, err := s.sink.Write(p); err != nil {
			s.cfg.Log.Warn("output dropped: the agent is stopping and no reader took it", "err", err)
			return false
		}
		more = !s.throughAgent()
		return !more
	})
	return more
}

// readNext is what a copy loop does after a read of the child's stdout.
type readNext int

const (
	readAgain readNext = iota // it worked, or failed and is tried again
	readDrain                 // EOF, or unwire asked to finish: take what is left
	readStop                  // readRetry gave up: the pipe is closed
)

// afterRead says what a copy loop does after a read that returned err,
// counting failures in retry. When retry gives up it closes the child's
// stdout, so that the child gets EPIPE rather than a full pipe.
func (w *wiring) afterRead(retry *readRetry, err error) readNext {
	switch {
	case err == nil:
		retry.ok()
		return readAgain
	case errors.Is(err, io.EOF), w.unwiring.Load():
		return readDrain
	case w.watched():
		return readAgain // a watch woke the wait: the loop looks again
	case retry.again(err):
		return readAgain
	}
	w.stdout.Close()
	return readStop
}

// readOut reads the child's stdout into the agent, in chunks of at most
// size, and gives every chunk to take, which reports false to stop at
// once (the output FIFO was given up), holding w.taking from each read
// until take returns. It reads until EOF, or until unwire asks it to
// finish, and then gives what is still in the pipe; a read that keeps
// failing ends it (see afterRead).
func (s *Engine) readOut(w *wiring, size int, take func([]byte) bool) {
	retry := readRetry{log: s.cfg.Log, what: "reading the child's output"}
	defer retry.end()
	for {
		ok, err := readTaking(w.stdout, w.spin, &w.taking, size, take)
		if !ok {
			return
		}
		if next := w.afterRead(&retry, err); next == readStop {
			return
		} else if next == readDrain {
			break
		}
	}
	if left := fifo.Drain(w.stdout); len(left) > 0 {
		take(left)
	}
}

// exited cleans up after a child whose tree is gone: the terminal comes
// back to the agent, and the child is unwired. A last child that ended by
// itself keeps its last words: its output waits for a reader for up to
// -stop-timeout (a stop cuts that short). With the -tee copy the log
// has them already, and a first run that failed (firstrun.go) has its
// last line quoted by Run's error: the last child's output is then
// given up as a stop's is, after flushGrace, and nothing waits for a
// reader.
func (s *Engine) exited(p *child.Process, last bool) {
	if err := s.cfg.Terminal.TakeBack(p); err != nil {
		s.cfg.Log.Warn("cannot take the terminal back", "err", err)
	}
	giveUp, grace := s.ctx, flushGrace
	switch {
	case !last || s.ctx.Err() != nil || s.cfg.Conversation != nil: // a restart, a stop; a transcript never waits for its reader
	case s.tee != nil, s.first.failedRun():
		ctx, cancel := context.WithCancel(s.ctx)
		cancel()
		giveUp = ctx
	default:
		ctx, cancel := context.WithTimeout(s.ctx, s.cfg.StopTimeout)
		defer cancel()
		giveUp, grace = ctx, 0
		defer s.lastWords(ctx)
	}
	defer s.talk.Exited(p.Status(), last) // after its output was copied
	if s.tty != nil {
		s.tty.unwire(giveUp.Done(), grace)
	} else {
		s.unwire(giveUp.Done(), grace)
	}
	if s.ctx.Err() == nil { // a stop ends the watches with closed frames (watch.go)
		s.watch.childEnded(p.Status())
	}
}

// lastWords waits until a reader has taken every byte the output FIFO
// holds, or ctx is done.
func (s *Engine) lastWords(ctx context.Context) {
	if s.sink.WaitDrained(ctx) == nil || s.ctx.Err() != nil {
		return // read, or a stop: that does not wait for a reader
	}
	s.cfg.Log.Warn("the child's last output was not read", "unread", s.sink.Unread(), "waited", s.cfg.StopTimeout)
}

// unwire disconnects the child that ended, once its tree is gone: its unread
// input is kept for the next one, and its last output is delivered. Nothing
// waits for a process outside the tree that may still hold the child's
// stdout. Once giveUp is closed, the output gets grace to find a reader,
// then is given up.
func (s *Engine) unwire(giveUp <-chan struct{}, grace time.Duration) {
	w := s.cur
	s.cur = nil
	s.setPiped(nil)
	s.feed.detach()
	w.wake.Lock()
	w.unwiring.Store(true)
	w.spin.SetReadDeadline(time.Unix(1, 0))
	w.wake.Unlock()
	waitCopied(w.copied, giveUp, grace, s.sink)
	w.stdout.Close()
	w.stderr.finish()
}

// waitCopied waits until copied is closed. Once giveUp is closed, it waits
// grace more, then closes sink so that the copy gives up.
func waitCopied(copied, giveUp <-chan struct{}, grace time.Duration, sink *fifo.Sink) {
	select {
	case <-copied:
		return
	case <-giveUp:
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-copied:
	case <-t.C:
		sink.Close()
		<-copied
	}
}

// snapshot is stream mode's part of the status file.
func (s *Engine) Snapshot() status.Status {
	snap := s.sup.Snapshot()
	st := status.Status{State: string(snap.State)}
	if st.State == "" {
		st.State = string(child.StateStarting)
	}
	st.Child = status.ChildStatus{PID: snap.Pid, Starts: snap.Starts, Restarts: snap.Restarts,
		RecentRestarts: snap.RecentRestarts, RestartWindow: s.cfg.RestartWindow.String(),
		QuickExits: snap.QuickExits, CrashLoop: snap.CrashLoop}
	if s.tty != nil {
		size := s.tty.winsize()
		st.Child.TTY = &status.TTY{Cols: int(size.Cols), Rows: int(size.Rows)}
	}
	if s.tee != nil {
		st.Tee = &status.Tee{Written: s.tee.written.Load(), Dropped: s.tee.dropped.Load()}
	}
	st.Child.Turn, st.Transcript = s.talk.Snapshot()
	st.Child.Watchers = s.watch.count()
	if snap.LastExit != nil {
		st.Child.LastExit = &status.LastExit{
			Code:   snap.LastExit.Code(),
			Signal: child.SignalName(snap.LastExit.Signal()),
			At:     snap.LastAt.UTC(),
		}
	}
	return st
}
