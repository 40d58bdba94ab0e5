//go:build linux

package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/follow"
	"github.com/fifobridge/fifobridge/bridge/stream"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
)

// openTimeout is how long an open waits for its child's first prompt when
// its line gives no timeout.
const openTimeout = 30 * time.Second

// readyLook is how often an open with a prompt looks whether the child
// has shown it.
const readyLook = 5 * time.Millisecond

// firstRun is how long a session's first run may take to fail as a
// program that cannot start does (127 or 126 at once: `env PROG` with no
// PROG): such an open fails, and no session is left. An open without a
// prompt is answered once the child is seen waiting for its input, or
// has run this long.
const firstRun = time.Second

// openOp opens the session the line names, or refuses.
func (e *Engine) openOp(ctl protocol.ParsedControl, reply *fifo.Reply) {
	e.mu.Lock()
	s, n := e.sessions[ctl.Session], len(e.sessions)
	e.mu.Unlock()
	switch {
	case s != nil && ctl.Reuse && !s.closing.Load():
		// A reuse starts nothing, but its line is refused as a first
		// open's would be (-arg without -allow-args, a bad pattern).
		if _, err := e.cfg.Stream(ctl, s.files); err != nil {
			e.refuse(ctl, reply, err)
			return
		}
		e.reuse(s, ctl, reply)
		return
	case s != nil && s.closing.Load():
		e.refuse(ctl, reply, fmt.Errorf("session %s is closing", ctl.Session))
		return
	case s != nil:
		e.refuse(ctl, reply, fmt.Errorf("session %s is open already", ctl.Session))
		return
	case n >= e.cfg.MaxSessions:
		e.refuse(ctl, reply, fmt.Errorf("%d sessions are open: -max-sessions is reached", n))
		return
	case !e.wait():
		e.refuse(ctl, reply, errTooManyWaiting)
		return
	}
	s, err := e.start(ctl)
	if err != nil {
		e.done()
		e.refuse(ctl, reply, err)
		return
	}
	e.later(func() { e.answerOpen(s, ctl, reply, false) })
}

// reuse answers an open with "reuse" of the open session s as the open
// that started it is answered: once its child runs (with a prompt: is
// ready) and the status file lists it, which may be at once.
func (e *Engine) reuse(s *session, ctl protocol.ParsedControl, reply *fifo.Reply) {
	if !e.wait() {
		e.refuse(ctl, reply, errTooManyWaiting)
		return
	}
	e.later(func() { e.answerOpen(s, ctl, reply, true) })
}

// start makes the session's files and engine, and runs it.
func (e *Engine) start(ctl protocol.ParsedControl) (*session, error) {
	files, err := e.makeDir(ctl.Session)
	if err != nil {
		return nil, err
	}
	s, err := e.newSession(ctl, files)
	if err != nil {
		e.removeFiles(ctl.Session, files)
		return nil, err
	}
	e.mu.Lock()
	e.sessions[s.name] = s
	e.mu.Unlock()
	e.wg.Add(1)
	go e.runSession(s)
	s.log.Info("session opened", "tty", s.tty, "prompt", s.prompt)
	e.poke()
	return s, nil
}

// newSession makes the stream engine of a session whose directory is
// files, on FIFOs made there.
func (e *Engine) newSession(ctl protocol.ParsedControl, files *sharedir.Dir) (*session, error) {
	cfg, err := e.cfg.Stream(ctl, files)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(e.ctx)
	s := &session{name: ctl.Session, files: files, roles: follow.NewRoles(),
		log: e.cfg.Log.With("session", ctl.Session), started: time.Now().UTC(), tty: cfg.Tty,
		prompt: cfg.Conversation != nil, ctx: ctx, cancel: cancel, signals: make(chan os.Signal, signalsQueued),
		running: make(chan struct{}), alive: make(chan struct{}), done: make(chan struct{})}
	e.own(s, cfg)
	src, sink, err := e.makeFiles(s)
	if err != nil {
		cancel()
		return nil, err
	}
	s.eng = stream.New(cfg, e.reaper, src, sink, e.poke)
	return s, nil
}

// own sets what the session's stream settings take from the engine: its
// directory, its conversation's FIFOs and the sweep of DIR/replies (the
// engine's), -session-idle, the signals, the log, and no controlling
// terminal of the agent's.
func (e *Engine) own(s *session, cfg *stream.Config) {
	cfg.Dir, cfg.Log, cfg.Forward, cfg.Started = s.files, s.log, s.signals, s.childStarted
	cfg.FirstRun, cfg.Alive = firstRun, s.childAlive
	cfg.IdleTimeout, cfg.StopTimeout, cfg.Terminal = e.cfg.SessionIdle, e.cfg.StopTimeout, nil
	if c := cfg.Conversation; c != nil {
		c.Dir, c.Replies, c.Roles, c.Created = s.files, e.cfg.Replies, s.roles, nil
		c.Create, c.AskMode = true, fifo.InputMode(e.cfg.Perm)
		c.SweptElsewhere = true // the engine's own sweep covers DIR/replies
		if c.MaxRequest == 0 {
			c.MaxRequest = e.cfg.MaxRequest
		}
		if c.ReplySweep == 0 {
			c.ReplySweep = e.cfg.ReplySweep
		}
	}
}

// answerOpen answers an open once the session's child started and is
// past the start of its first run (alive: seen waiting for its input, or
// running for firstRun; with a prompt: once it showed its prompt), or
// with an error frame when it could not start or ended before, or when
// no prompt came within the line's timeout (the session stays open).
// reused says the line reused s, which an earlier open started.
func (e *Engine) answerOpen(s *session, ctl protocol.ParsedControl, reply *fifo.Reply, reused bool) {
	limit := ctl.Limit
	if limit <= 0 {
		limit = openTimeout
	}
	timeout := time.NewTimer(limit)
	defer timeout.Stop()
	var look <-chan time.Time
	if s.prompt {
		t := time.NewTicker(readyLook)
		defer t.Stop()
		look = t.C
	}
	running := s.running // with a prompt: from then on, look whether it is ready
	if !s.prompt {
		running = s.alive
	}
	for {
		if running == nil || s.prompt {
			if pid, ok := s.ready(); ok {
				e.flush()
				e.write(ctl.ID, reply, protocol.AppendOpened(nil, ctl.ID, pid, reused))
				return
			}
		}
		select {
		case <-running:
			running = nil // from now on: ready, with a prompt
			if !s.prompt {
				e.flush()
				e.write(ctl.ID, reply, protocol.AppendOpened(nil, ctl.ID, int(s.pid.Load()), reused))
				return
			}
		case <-look:
		case <-s.done:
			if !s.prompt && closed(s.alive) { // it started, and ended since
				e.write(ctl.ID, reply, protocol.AppendOpened(nil, ctl.ID, int(s.pid.Load()), reused))
				return
			}
			e.write(ctl.ID, reply, openFailed(s, ctl.ID))
			return
		case <-timeout.C:
			msg := fmt.Sprintf("session %s: no prompt within %v; it stays open: close it with `fifobridge close %s`", s.name, limit, s.name)
			s.log.Warn("open timed out: no prompt yet; the session stays open", "timeout", limit)
			e.write(ctl.ID, reply, protocol.AppendOpenError(nil, ctl.ID, msg, 0, true))
			return
		}
	}
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// openFailed is the error frame of an open whose session ended before it
// was answered: its child could not start (127 or 126), its first run
// failed as one that cannot start does (127 or 126, its last line
// quoted), or it ended.
func openFailed(s *session, id string) []byte {
	var se *child.StartError
	if errors.As(s.err, &se) {
		return protocol.AppendOpenError(nil, id, se.Error(), se.Code(), false)
	}
	var fe *stream.FirstRunError
	if errors.As(s.err, &fe) {
		return protocol.AppendOpenError(nil, id, fmt.Sprintf("session %s: %v", s.name, fe), fe.Code(), false)
	}
	if s.err != nil {
		return protocol.AppendOpenError(nil, id, fmt.Sprintf("session %s: %v", s.name, s.err), 0, false)
	}
	what := "started" // closed, or the agent stopped, before its child started
	if s.prompt && s.pid.Load() != 0 {
		what = "showed its prompt"
	}
	return protocol.AppendOpenError(nil, id, fmt.Sprintf("session %s ended before its child %s (%s)", s.name, what, s.status), 0, false)
}
