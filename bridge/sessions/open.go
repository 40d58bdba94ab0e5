//go:build linux

package sessions

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/fifobridge/fifobridge/bridge/config"
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

// openOp opens the session the line names, or refuses.
func (e *Engine) openOp(ctl protocol.ParsedControl, reply *fifo.Reply) {
	e.mu.Lock()
	s, n := e.sessions[ctl.Session], len(e.sessions)
	e.mu.Unlock()
	switch {
	case s != nil && ctl.Reuse && !s.closing.Load():
		// A reuse starts nothing, but its line is refused as a first
		// open's would be (-arg without -allow-args, a bad pattern).
		if _, err := e.run.Entry(&ctl, e.places(s)); err != nil {
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
	case n >= e.run.MaxSessions:
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
// files, on FIFOs made there, with the settings of its open line.
func (e *Engine) newSession(ctl protocol.ParsedControl, files *sharedir.Dir) (*session, error) {
	s := &session{name: ctl.Session, files: files, roles: follow.NewRoles(),
		log: e.log.With("session", ctl.Session), started: time.Now().UTC(),
		signals: make(chan os.Signal, signalsQueued), done: make(chan struct{})}
	cfg, err := e.run.Entry(&ctl, e.places(s))
	if err != nil {
		return nil, err
	}
	cfg.Forward = s.signals
	s.tty, s.prompt = cfg.Tty, cfg.Conversation != nil
	s.ctx, s.cancel = context.WithCancel(e.ctx)
	src, sink, err := e.makeFiles(s)
	if err != nil {
		s.cancel()
		return nil, err
	}
	s.eng = stream.New(cfg, e.reaper, src, sink, e.poke)
	return s, nil
}

// places is where session s is: its directory, its FIFOs' roles and its
// log, DIR/replies, and the agent's cgroups.
func (e *Engine) places(s *session) config.Places {
	return config.Places{Dir: s.files, Replies: e.cfg.Replies, Roles: s.roles, Cgroups: e.cfg.Cgroups, Log: s.log}
}

// answerOpen answers an open once the session's child is past its
// start (its engine's Ready event: with a prompt, once it showed its
// prompt; else once it was seen waiting for its input, or ran for
// config.SessionFirstRun), or with an error frame when it could not start or ended
// before, or when that did not come within the line's timeout (the
// session stays open). Nothing is polled: it waits for the two events,
// Ready and the session's end, and its timeout. reused says the line
// reused s, which an earlier open started.
func (e *Engine) answerOpen(s *session, ctl protocol.ParsedControl, reply *fifo.Reply, reused bool) {
	limit := ctl.Limit
	if limit <= 0 {
		limit = openTimeout
	}
	timeout := time.NewTimer(limit)
	defer timeout.Stop()
	select {
	case <-s.eng.Ready():
	case <-s.done:
	case <-timeout.C:
		msg := fmt.Sprintf("session %s: no prompt within %v; it stays open: close it with `fifobridge close %s`", s.name, limit, s.name)
		s.log.Warn("open timed out: no prompt yet; the session stays open", "timeout", limit)
		e.write(ctl.ID, reply, protocol.AppendOpenError(nil, ctl.ID, msg, 0, true))
		return
	}
	if !closed(s.eng.Ready()) { // it ended before it was ready
		e.write(ctl.ID, reply, openFailed(s, ctl.ID))
		return
	}
	if !closed(s.done) {
		e.flush() // the status file lists it before the answer says so
	}
	e.write(ctl.ID, reply, protocol.AppendOpened(nil, ctl.ID, s.eng.Pid(), reused))
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
	if s.prompt && s.eng.Pid() != 0 {
		what = "showed its prompt"
	}
	return protocol.AppendOpenError(nil, id, fmt.Sprintf("session %s ended before its child %s (%s)", s.name, what, s.status), 0, false)
}
