//go:build linux

package sessions

import (
	"context"
	"log/slog"
	"sync"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/bridge/internal/idle"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/status"
)

// Table is the agent's table of stream children, in stream and sessions
// mode: each entry (a session) is a stream.Engine with its files, found
// by name. Who may block on what:
//
//   - The control loop (serve: sessions mode's DIR/in, stream mode's
//     DIR/control) reads lines, opens reply
//     FIFOs without waiting, makes a new session's files, and writes only
//     what a pipe takes at once. It never waits for a reply reader or a
//     session.
//   - Each entry's stream engine runs in a goroutine of its own
//     (runSession), which removes its files once Run returned.
//   - An open's answer waits for the session's child (answerOpen), a
//     close's for the session's end (closeOp), each in a goroutine of
//     its own, writing under the rule (package bound).
type Table struct {
	cfg    *Config
	log    *slog.Logger
	reaper *child.Reaper
	src    *fifo.Source // stream mode: the entry's input; sessions mode: the control FIFO
	sink   *fifo.Sink   // stream mode: the entry's output; sessions mode: DIR/out, which carries nothing
	poke   func()
	rule   *bound.Rule
	idle   *idle.Clock // control lines and sessions' ends, for -idle-timeout (sessions mode)

	nextID uint64 // ids given to lines that came without one; the loop's own

	wg sync.WaitGroup // entries' runs and waiting answers

	mu       sync.Mutex
	sessions map[string]*session // by name; stream mode's one is ""
	waiting  int                 // answers waiting (maxWaiting)
	ctx      context.Context     // of run; done means stopping
}

// New returns the table of the run's mode (cfg.Mode), serving src
// and sink: in stream mode the one entry's input and output, which its
// engine closes; in sessions mode the control FIFO and DIR/out, which
// Run closes at the end. poke is told whenever the status changed. Run
// serves.
func New(cfg *Config, reaper *child.Reaper, src *fifo.Source, sink *fifo.Sink, poke func()) *Table {
	return &Table{cfg: cfg, log: cfg.Log, reaper: reaper, src: src, sink: sink, poke: poke,
		rule: bound.NewRule(cfg.StopTimeout), idle: idle.NewClock(), sessions: map[string]*session{}}
}

// single says whether the table is stream mode's: one entry, opened at
// start.
func (t *Table) single() bool { return t.cfg.Mode != status.ModeSessions }

// Run serves until the work is over or ctx is done, and returns once
// every entry is gone and every answer written or given up, src and sink
// closed. Stream mode: its one entry, opened at start from the empty
// open line on DIR's own FIFOs, until it ends; its status and error
// (a failed start) are Run's. Sessions mode: control lines, until ctx is
// done or -idle-timeout passed with no session open; then every session
// is closed, in parallel, and the lines already read are refused; its
// status is always 0, a stop of sessions mode being a success.
func (t *Table) Run(ctx context.Context) (child.ExitStatus, error) {
	if t.single() {
		return t.runOne(ctx)
	}
	return t.runSessions(ctx)
}

// runOne is stream mode's Run. Its control FIFO, when it has one, is
// served from its entry's start to its end; then it is closed, and the
// lines read by then are answered (as the entry's end allows) before
// Run waits for the answers.
func (t *Table) runOne(ctx context.Context) (child.ExitStatus, error) {
	t.setContext(ctx)
	loopCtx, stopLoops := context.WithCancel(ctx)
	var loops sync.WaitGroup
	loops.Add(2)
	go func() { defer loops.Done(); t.forward(loopCtx) }()
	go func() { defer loops.Done(); t.sweep(loopCtx) }()
	defer func() { stopLoops(); loops.Wait() }()
	s, err := t.start(protocol.ParsedControl{})
	if err != nil {
		t.src.Close()
		t.sink.Close()
		t.closeControl()
		return child.ExitStatus{}, err
	}
	var served sync.WaitGroup
	if t.cfg.Control != nil {
		served.Add(1)
		go func() { defer served.Done(); t.serve(ctx, t.cfg.Control) }()
	}
	<-s.done
	t.closeControl()
	served.Wait()
	t.wg.Wait()
	return s.status, s.err
}

// closeControl closes stream mode's control FIFO, if any, which ends
// its serve.
func (t *Table) closeControl() {
	if t.cfg.Control != nil {
		t.cfg.Control.Close()
	}
}

// runSessions is sessions mode's Run.
func (t *Table) runSessions(ctx context.Context) (child.ExitStatus, error) {
	ctx, stopIdle := t.idle.StopWhenIdle(ctx, t.cfg.IdleTimeout, t.log, t.busy)
	defer stopIdle()
	t.setContext(ctx)
	t.removeLeftovers()

	var loops sync.WaitGroup
	loops.Add(3)
	go func() { defer loops.Done(); t.serve(ctx, t.src) }()
	go func() { defer loops.Done(); t.forward(ctx) }()
	go func() { defer loops.Done(); t.sweep(ctx) }()
	<-ctx.Done()
	t.rule.Stop()
	t.log.Info("stopping: closing every session", "sessions", t.open())
	t.src.Close() // ends serve; every session's context is done with ctx
	loops.Wait()
	t.wg.Wait()
	t.sink.Close()
	return child.ExitStatus{}, nil
}

// setContext records the context of Run, whose end is the table's stop.
func (t *Table) setContext(ctx context.Context) {
	t.mu.Lock()
	t.ctx = ctx
	t.mu.Unlock()
}

// sweep removes, until ctx is done, the reply FIFOs in DIR/replies that
// clients killed left behind (answer.Sweep): one sweep for the control
// lines' answers and every entry's asks. An answer or an asker's turn
// holds its reply FIFO open, and its client the read end; a waiting ask
// holds none, but its asker the read end: the sweep takes only FIFOs
// nobody reads. Without DIR/replies (stream mode without DIR, or one
// whose replies/ could not be made) there is nothing to sweep.
func (t *Table) sweep(ctx context.Context) {
	if t.cfg.Replies != nil {
		answer.Sweep(ctx, t.log, t.cfg.Replies, t.cfg.ReplySweep, func(string) bool { return false })
	}
}

// session returns the open session name, or nil.
func (t *Table) session(name string) *session {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.sessions[name]
}

// entries are the table's entries now.
func (t *Table) entries() []*session {
	t.mu.Lock()
	defer t.mu.Unlock()
	all := make([]*session, 0, len(t.sessions))
	for _, s := range t.sessions {
		all = append(all, s)
	}
	return all
}

// open returns how many sessions are open.
func (t *Table) open() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.sessions)
}

// busy reports whether a session is open, for -idle-timeout.
func (t *Table) busy() bool { return t.open() > 0 }
