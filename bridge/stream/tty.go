//go:build linux

package stream

import (
	"errors"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/idle"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/pipeio"
	"github.com/fifobridge/fifobridge/internal/readwait"
	"github.com/fifobridge/fifobridge/internal/tty"
	"golang.org/x/sys/unix"
)

// terminal is stream mode with -tty: every child starts on a fresh
// pseudo-terminal, whose master the agent holds while the child's tree
// runs. Bytes from the input FIFO are written to the master as typed; what
// the master gives (the child's output and the terminal's echo) goes to the
// output FIFO byte for byte, waiting while the FIFO is full. Input read from
// the FIFO and not yet written to a terminal goes to the next one. Splice
// is not used: a terminal is not a pipe, and input must pass the line
// discipline as written.
type terminal struct {
	cfg  *Config
	src  *fifo.Source
	sink *fifo.Sink
	poke func()      // the status changed
	idle *idle.Clock // told of every input byte, for -idle-timeout
	tee  *teeOut     // -tee: offered the terminal's output; or nil
	// talk, with -prompt, takes the terminal's output instead of the
	// output FIFO: the conversation, which keeps that as a transcript.
	talk  talk
	first *firstRun // shown the first child's output while it is watched, or nil
	watch *fanout   // the child's watchers, offered its output
	// running is told the pid of each child started, before its output
	// is read (Engine.running).
	running func(pid int)
	// sizes watches DIR/winsize (serveTerminal), or is nil; close ends it.
	sizes *winsizeWatch

	mu      sync.Mutex
	cond    sync.Cond
	size    tty.Winsize
	master  *os.File // the running child's terminal, or nil
	pending []byte   // read from the input FIFO, not yet written to a terminal
	busy    bool     // a write to master is under way
	closed  bool
	cur     *ttyWiring
	ends    endWaits // ends of the input that wait (ttyend.go)
}

// ttyChunk is the most moved at once between a FIFO and a terminal; a
// terminal takes and gives a few KiB at a time anyway.
const ttyChunk = 64 << 10

// ttyWiring is one child's terminal.
type ttyWiring struct {
	master   *os.File            // written to; the terminal's master
	output   *os.File            // read from: the master too, but for tests
	spin     *pipeio.ReadSpinner // waits for output; its read deadline is set through it
	taking   sync.Mutex          // held by copyOut from a read of output until its bytes are delivered
	copied   chan struct{}       // closed when the master's output is copied
	unwiring atomic.Bool         // unwire asked copyOut to finish
	quit     chan struct{}       // closed by unwire: the watch is over
	watched  chan struct{}       // closed when the watch returned
}

func newTerminal(cfg *Config, src *fifo.Source, sink *fifo.Sink, poke func(), clock *idle.Clock) *terminal {
	t := &terminal{cfg: cfg, src: src, sink: sink, poke: poke, idle: clock, size: cfg.TtySize, talk: quiet{}}
	t.cond.L = &t.mu
	return t
}

// start starts one child on a new terminal, spec less its stdio. Once
// stopping is closed and the child has gone, the processes left on its
// terminal get SIGHUP (when it exits by itself, the Supervisor's Hangup
// does that before the stop sequence). The first child (first) also gets
// a reader that sees it wait for its input, when no conversation has
// one (see firstrun.go).
func (t *terminal) start(reaper *child.Reaper, spec child.Spec, stopping <-chan struct{}, first bool) (*child.Process, *childReader, error) {
	t.mu.Lock()
	size := t.size
	t.mu.Unlock()
	master, slave, err := tty.OpenPTY(size)
	if err != nil {
		return nil, nil, err
	}
	if c := t.cfg.Child.Credential; c != nil {
		// The terminal is the child user's, as login makes it.
		if err := slave.Chown(int(c.Uid), int(c.Gid)); err != nil {
			t.cfg.Log.Warn("cannot give the terminal to the child's user", "tty", slave.Name(), "err", err)
		}
	}
	spec.Ctty = slave
	spec.Env = terminalEnv(spec.Env)
	var probe *readwait.Probe
	if t.cfg.Conversation != nil || first {
		probe = newProbe(slave, t.cfg.Log, t.cfg.Conversation != nil) // the slave is the terminal the child reads
	}
	p, err := reaper.Start(spec)
	slave.Close() // the child has it; holding it would hide the terminal's end (EIO)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	if t.running != nil {
		t.running(p.Pid)
	}
	w := t.attach(master, master, func(quit <-chan struct{}) {
		select {
		case <-stopping:
		case <-quit:
			return
		}
		select {
		case <-p.Done():
			t.hangup(reaper, p)
		case <-quit:
		}
	})
	r := &childReader{probe: probe, master: master, out: w.output, taking: &w.taking}
	if t.cfg.Conversation != nil {
		reading(t.talk, r)
		return p, nil, nil
	}
	return p, r, nil
}

// attach makes master the terminal that input goes to, and copies output,
// what master (or, in tests, another file) gives, to the output FIFO.
// watch, if set, runs until unwire, which closes its quit and waits for it.
func (t *terminal) attach(master, output *os.File, watch func(quit <-chan struct{})) *ttyWiring {
	w := &ttyWiring{master: master, output: output, spin: pipeio.NewReadSpinner(output), copied: make(chan struct{}),
		quit: make(chan struct{}), watched: make(chan struct{})}
	go func() {
		defer close(w.copied)
		t.copyOut(w)
		t.talk.OutputEnded()
	}()
	go func() {
		defer close(w.watched)
		if watch != nil {
			watch(w.quit)
		}
	}()
	t.mu.Lock()
	t.master, t.cur = master, w
	t.cond.Broadcast()
	t.mu.Unlock()
	return w
}

// feed writes the input FIFO to the current terminal until close is called
// or src is closed. With no terminal, input waits in the FIFO. A read that
// fails is tried again, as readRetry says; should feed give up, input
// waits in the FIFO from then on.
func (t *terminal) feed() {
	retry := readRetry{log: t.cfg.Log, what: "reading the input"}
	defer retry.end()
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		for t.master == nil && !t.closed {
			t.cond.Wait()
		}
		if t.closed {
			return
		}
		m := t.master
		if t.serveEnds(m) {
			continue
		}
		if len(t.pending) == 0 {
			t.pending = nil // hold no buffer while waiting for input
			t.src.Rearm()   // before the lock is let go, so endInput's Wake counts
			t.mu.Unlock()
			chunk, n, err := t.readInput() // the terminal may change meanwhile: pending goes to the current one
			t.mu.Lock()
			if n > 0 {
				t.idle.Touch()
				t.pending = append(t.pending, (*chunk)[:n]...)
				t.ends.moved(n)
			}
			if chunk != nil {
				giveChunk(chunk)
			}
			if errors.Is(err, fifo.ErrClosed) {
				return
			}
			if errors.Is(err, os.ErrDeadlineExceeded) {
				continue // endInput woke it: serveEnds counts
			}
			if err != nil {
				t.mu.Unlock()
				again := retry.again(err)
				t.mu.Lock()
				if !again {
					return // the input waits in its FIFO
				}
			} else {
				retry.ok()
			}
			continue
		}
		if t.busy { // a turn's input is being written
			t.cond.Wait()
			continue
		}
		t.busy = true
		pending := t.pending
		t.mu.Unlock()
		n, err := m.Write(pending)
		t.mu.Lock()
		t.busy = false
		t.pending = t.pending[n:]
		t.cond.Broadcast()
		if n > 0 {
			t.talk.Typed()
		}
		if err != nil && !os.IsTimeout(err) {
			// The terminal is gone (EIO): wait for the next one.
			for t.master == m && !t.closed {
				t.cond.Wait()
			}
		}
	}
}

// readInput reads the next bytes of the input FIFO into a chunk of
// ttyChunk (chunks.go), which the caller gives back: it waits for them
// with no buffer held, so that an idle terminal holds none.
func (t *terminal) readInput() (*[]byte, int, error) {
	if err := t.src.WaitReadable(); err != nil {
		return nil, 0, err
	}
	chunk := takeChunk(ttyChunk)
	n, err := t.src.Read(*chunk)
	return chunk, n, err
}

// copyOut moves the terminal's output to the output FIFO until the
// terminal has no process left on it (EIO, after the last byte), or until
// unwire asks it to finish; then it copies what the terminal still holds.
// Other errors are tried again, as readRetry says.
func (t *terminal) copyOut(w *ttyWiring) {
	retry := readRetry{log: t.cfg.Log, what: "reading the child's terminal"}
	defer retry.end()
	for {
		var werr error
		_, err := readTaking(w.output, w.spin, &w.taking, ttyChunk, func(p []byte) bool {
			werr = t.pass(p)
			return werr == nil
		})
		if werr != nil {
			t.cfg.Log.Warn("output dropped: the agent is stopping and no reader took it", "err", werr)
			return
		}
		switch {
		case err == nil:
			retry.ok()
			continue
		case errors.Is(err, syscall.EIO), errors.Is(err, io.EOF):
			return // no process has the terminal any more
		case w.unwiring.Load():
		case retry.again(err):
			continue
		default:
			return // the terminal is closed with its child
		}
		break
	}
	t.drain(w)
}

// drain copies what the terminal of w holds now, without waiting.
func (t *terminal) drain(w *ttyWiring) {
	rc, err := w.output.SyscallConn()
	if err != nil {
		return
	}
	buf := make([]byte, ttyChunk)
	for {
		var n int
		var rerr error
		rc.Control(func(fd uintptr) { n, rerr = unix.Read(int(fd), buf) })
		if n <= 0 || rerr != nil {
			return
		}
		if err := t.pass(buf[:n]); err != nil {
			t.cfg.Log.Warn("output dropped: the agent is stopping and no reader took it", "err", err)
			return
		}
	}
}

// pass offers p to the -tee copy, if any, and to the watchers, and then
// delivers it: the log and the watchers get every byte the terminal gave,
// the last ones drained at the end too, also when the output FIFO is
// given up.
func (t *terminal) pass(p []byte) error {
	if t.tee != nil {
		t.tee.offer(p)
	}
	t.watch.offer(p)
	t.first.output(p)
	return t.deliver(p)
}

// deliver passes the terminal's output on: to the output FIFO, waiting
// while it is full, or with -prompt to the conversation, which waits only
// while the asker of the turn in progress has no room.
func (t *terminal) deliver(p []byte) error {
	if t.cfg.Conversation == nil {
		_, err := t.sink.Write(p)
		return err
	}
	t.talk.Output(p)
	return nil
}

// writeTurn writes p whole to the current terminal, between two writes of
// the input FIFO's bytes; it waits for a terminal, and fails once the
// terminal is closed or taken away while p is written. Once p is written,
// the copy of the terminal's output is told that an answer is due, as on
// pipes (feeder.writeTurn).
func (t *terminal) writeTurn(p []byte) error {
	t.mu.Lock()
	for (t.master == nil || t.busy) && !t.closed {
		t.cond.Wait()
	}
	if t.closed {
		t.mu.Unlock()
		return errNoInput
	}
	m, w := t.master, t.cur
	t.busy = true
	t.mu.Unlock()
	_, err := m.Write(p)
	if err == nil {
		w.spin.Expect() // while busy: detachInput waits, and unwire after it
	}
	t.mu.Lock()
	t.busy = false
	t.cond.Broadcast()
	t.mu.Unlock()
	return err
}

// unwire disconnects the child that ended, once its tree is gone: input
// not yet written to its terminal is kept for the next one, its last output
// is delivered, and the master is closed. Once giveUp is closed, the output
// gets grace to find a reader, then is given up.
func (t *terminal) unwire(giveUp <-chan struct{}, grace time.Duration) {
	t.detachInput()
	t.mu.Lock()
	w := t.cur
	t.cur = nil
	t.mu.Unlock()

	w.unwiring.Store(true)
	w.spin.SetReadDeadline(time.Unix(1, 0))
	waitCopied(w.copied, giveUp, grace, t.sink)
	close(w.quit)
	<-w.watched
	w.master.Close()
	if w.output != w.master {
		w.output.Close()
	}
}

// detachInput stops input to the current terminal, whose child has ended:
// what the processes left on it would read is kept for the next child.
func (t *terminal) detachInput() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.master == nil {
		return
	}
	t.master.SetWriteDeadline(time.Unix(1, 0)) // ends a write the terminal does not take
	t.master = nil
	t.ends.fail(errChildEnded)
	for t.busy {
		t.cond.Wait()
	}
}

// close ends feed and the watch of DIR/winsize; the caller also closes
// src, which wakes feed's read.
func (t *terminal) close() {
	t.mu.Lock()
	t.closed = true
	t.ends.fail(errNoInput)
	t.cond.Broadcast()
	t.mu.Unlock()
	if t.sizes != nil {
		t.sizes.Stop()
	}
}

// held reports how many bytes read from the input FIFO no terminal took.
func (t *terminal) held() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.pending)
}

// foreground returns the foreground process group of the running child's
// terminal.
func (t *terminal) foreground() (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.master == nil {
		return 0, errNoChild
	}
	pg, err := tty.Foreground(t.master)
	if err == nil && pg <= 0 {
		err = errors.New("the child's terminal has no foreground process group")
	}
	return pg, err
}

// winsize returns the terminals' window size.
func (t *terminal) winsize() tty.Winsize {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.size
}

// resize sets the window size of the current terminal and of the next ones.
func (t *terminal) resize(size tty.Winsize) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if size == t.size {
		return
	}
	t.size = size
	t.cfg.Log.Info("terminal resized", "size", size.String())
	if t.master != nil {
		if err := tty.Resize(t.master, size); err != nil {
			t.cfg.Log.Warn("cannot resize the terminal", "err", err)
		}
	}
	if t.poke != nil {
		t.poke()
	}
}

// serveTerminal starts the feed of -tty, which ends once the terminal is
// closed (wg waits for it), and the watch of DIR/winsize, which the
// terminal's close ends.
func (s *Engine) serveTerminal(wg *sync.WaitGroup) {
	wg.Add(1)
	go func() { defer wg.Done(); s.tty.feed() }()
	if s.cfg.Dir == nil {
		s.cfg.Log.Warn("no directory to watch for window sizes: " + winsizeName + " is not read")
		return
	}
	s.tty.sizes = s.tty.watchWinsize(s.cfg.Dir)
}

// heldByTerminal is the input no terminal took, with -tty.
func (s *Engine) heldByTerminal() int {
	if s.tty == nil {
		return 0
	}
	return s.tty.held()
}

// hangup takes the input away from the terminal of p, which has exited,
// and sends SIGHUP to the processes left on it.
func (t *terminal) hangup(reaper *child.Reaper, p *child.Process) {
	t.detachInput()
	if n := reaper.Hangup(p); n > 0 {
		t.cfg.Log.Info("hung up the processes left on the child's terminal", "pid", p.Pid, "processes", n)
	}
}

// terminalEnv is the environment of a terminal child: env (nil: the
// agent's own) with TERM=dumb when it has no TERM or an empty one, so that
// programs neither guess a terminal's escape sequences nor ask it
// questions (busybox ash's cursor query with an empty TERM).
func terminalEnv(env []string) []string {
	if env == nil {
		env = os.Environ()
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "TERM=") && kv != "TERM=" {
			return env
		}
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return kv == "TERM=" })
	return append(env, "TERM=dumb")
}
