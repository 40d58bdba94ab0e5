//go:build linux

package sessions

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/fifobridge/fifobridge/bridge/config"
	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/bridge/internal/idle"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/status"
)

// maxWaiting bounds the answers that wait in the agent at once (an open
// for its child, a close for its tree, a long list): each holds its reply
// FIFO and a goroutine. One more is refused at once.
const maxWaiting = 1024

// Table is sessions mode. Who may block on what:
//
//   - The control loop (serve) reads lines, opens reply FIFOs without
//     waiting, makes a new session's files, and writes only what a pipe
//     takes at once. It never waits for a reply reader or a session.
//   - Each session's stream engine runs in a goroutine of its own
//     (runSession), which removes its files once Run returned.
//   - An open's answer waits for the session's child (answerOpen), a
//     close's for the session's end (answerClose), each in a goroutine of
//     its own, writing under the rule (package bound).
type Table struct {
	cfg    *Config
	run    *config.Run // cfg.Run
	log    *slog.Logger
	reaper *child.Reaper
	src    *fifo.Source
	sink   *fifo.Sink // DIR/out: it carries nothing in sessions mode
	poke   func()
	rule   *bound.Rule
	idle   *idle.Clock // control lines and sessions' ends, for -idle-timeout

	nextID uint64 // ids given to lines that came without one; the loop's own

	wg sync.WaitGroup // sessions' runs and waiting answers

	mu       sync.Mutex
	sessions map[string]*session
	waiting  int             // answers waiting (maxWaiting)
	ctx      context.Context // of run; done means stopping
}

// New returns sessions mode serving the control FIFO src; sink, DIR/out,
// is only closed at the end. poke is told whenever the status changed.
// Run serves.
func New(cfg *Config, reaper *child.Reaper, src *fifo.Source, sink *fifo.Sink, poke func()) *Table {
	return &Table{cfg: cfg, run: cfg.Run, log: cfg.Run.Log, reaper: reaper, src: src, sink: sink, poke: poke,
		rule: bound.NewRule(cfg.Run.StopTimeout), idle: idle.NewClock(), sessions: map[string]*session{}}
}

// Run serves control lines until ctx is done (or -idle-timeout passed
// with no session open). Then every session is closed, in parallel, and
// the lines already read are refused. Run returns once every session is
// gone and every answer written or given up; it closes src and sink. Its
// status is always 0: a stop of sessions mode is a success.
func (t *Table) Run(ctx context.Context) (child.ExitStatus, error) {
	ctx, stopIdle := t.idle.StopWhenIdle(ctx, t.run.IdleTimeout, t.log, t.busy)
	defer stopIdle()
	t.mu.Lock()
	t.ctx = ctx
	t.mu.Unlock()
	t.removeLeftovers()

	var loops sync.WaitGroup
	loops.Add(3)
	go func() { defer loops.Done(); t.serve(ctx) }()
	go func() { defer loops.Done(); t.forward(ctx) }()
	go func() {
		defer loops.Done()
		// An answer holds its reply FIFO open, and its client the read
		// end: the sweep takes only FIFOs nobody reads.
		answer.Sweep(ctx, t.log, t.cfg.Replies, t.run.ReplySweep, func(string) bool { return false })
	}()
	<-ctx.Done()
	t.rule.Stop()
	t.log.Info("stopping: closing every session", "sessions", t.open())
	t.src.Close() // ends serve; every session's context is done with ctx
	loops.Wait()
	t.wg.Wait()
	t.sink.Close()
	return child.ExitStatus{}, nil
}

// forward passes each signal to every session, without waiting for any:
// a session whose signals pile up loses the new one, and that is logged.
func (t *Table) forward(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case sig := <-t.run.Forward:
			t.mu.Lock()
			for _, s := range t.sessions {
				select {
				case s.signals <- sig:
				default:
					s.log.Warn("signal not forwarded: the session has not taken the ones before", "signal", sig.String())
				}
			}
			t.mu.Unlock()
		}
	}
}

// open returns how many sessions are open.
func (t *Table) open() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.sessions)
}

// busy reports whether a session is open, for -idle-timeout.
func (t *Table) busy() bool { return t.open() > 0 }

// Snapshot is sessions mode's part of the status file.
func (t *Table) Snapshot() status.Status {
	st := status.Status{Mode: status.ModeSessions, State: string(child.StateRunning)}
	t.mu.Lock()
	if t.ctx != nil && t.ctx.Err() != nil {
		st.State = string(child.StateStopping)
	}
	t.mu.Unlock()
	st.Sessions = t.list()
	return st
}

// list describes every open session, by name.
func (t *Table) list() []status.Session {
	t.mu.Lock()
	all := make([]*session, 0, len(t.sessions))
	for _, s := range t.sessions {
		all = append(all, s)
	}
	t.mu.Unlock()
	slices.SortFunc(all, func(a, b *session) int { return strings.Compare(a.name, b.name) })
	out := make([]status.Session, 0, len(all))
	for _, s := range all {
		out = append(out, s.snapshot())
	}
	return out
}

// wait reserves room for one more waiting answer, or reports false when
// maxWaiting wait already. done gives the room back.
func (t *Table) wait() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.waiting >= maxWaiting {
		return false
	}
	t.waiting++
	return true
}

// later runs answer, which writes an answer that waits, in a goroutine
// the engine owns and waits for; the room wait reserved for it is given
// back when it returns.
func (t *Table) later(answer func()) {
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		defer t.done()
		answer()
	}()
}

// done gives back the room wait reserved.
func (t *Table) done() {
	t.mu.Lock()
	t.waiting--
	t.mu.Unlock()
}
