//go:build linux

package sessions

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fifobridge/fifobridge/bridge/config"
	"github.com/fifobridge/fifobridge/bridge/internal/follow"
	"github.com/fifobridge/fifobridge/bridge/stream"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// openTimeout is how long an open waits for its child's first prompt when
// its line gives no timeout.
const openTimeout = 30 * time.Second

// openOp opens the session the line names, or refuses.
func (t *Table) openOp(ctl protocol.ParsedControl, reply *fifo.Reply) {
	t.mu.Lock()
	s, n := t.sessions[ctl.Session], len(t.sessions)
	t.mu.Unlock()
	switch {
	case s != nil && ctl.Reuse && !s.closing.Load():
		// A reuse starts nothing, but its line is refused as a first
		// open's would be (-arg without -allow-args, a bad pattern).
		if _, err := t.cfg.Entry(&ctl, t.places(s)); err != nil { // s's places: no file is made
			t.refuse(ctl, reply, err)
			return
		}
		t.reuse(s, ctl, reply)
		return
	case s != nil && s.closing.Load():
		t.refuse(ctl, reply, fmt.Errorf("session %s is closing", ctl.Session))
		return
	case s != nil:
		t.refuse(ctl, reply, fmt.Errorf("session %s is open already", ctl.Session))
		return
	case n >= t.cfg.MaxSessions:
		t.refuse(ctl, reply, fmt.Errorf("%d sessions are open: -max-sessions is reached", n))
		return
	case !t.wait():
		t.refuse(ctl, reply, errTooManyWaiting)
		return
	}
	s, err := t.start(ctl)
	if err != nil {
		t.done()
		t.refuse(ctl, reply, err)
		return
	}
	t.later(func() { t.answerOpen(s, ctl, reply, false) })
}

// reuse answers an open with "reuse" of the open session s as the open
// that started it is answered: once its child runs (with a prompt: is
// ready) and the status file lists it, which may be at once.
func (t *Table) reuse(s *session, ctl protocol.ParsedControl, reply *fifo.Reply) {
	if !t.wait() {
		t.refuse(ctl, reply, errTooManyWaiting)
		return
	}
	t.later(func() { t.answerOpen(s, ctl, reply, true) })
}

// start opens the entry ctl names and runs it: a session, whose files it
// makes in DIR/sessions/NAME (one sharedir.Unit), or stream mode's, the empty name, on DIR's
// own FIFOs (the agent's: src and sink). Its settings come from its open
// line (config.Run.Entry): this is the one path from an open line to a
// running child.
func (t *Table) start(ctl protocol.ParsedControl) (*session, error) {
	s := t.newSession(ctl.Session)
	run, err := t.cfg.Session(&ctl)
	if err != nil {
		return nil, err
	}
	s.tty, s.prompt = run.Tty, run.Prompt != nil
	if !s.streamMode() {
		if s.unit, err = t.makeFiles(ctl.Session, s.tty, s.prompt); err != nil {
			return nil, err
		}
		s.files = s.unit.Dir()
	}
	cfg := t.cfg.EntryOf(run, ctl.Session, t.places(s))
	src, sink, err := t.wire(s)
	if err != nil {
		t.unwire(s)
		return nil, err
	}
	t.follow(s, src, sink)
	s.ctx, s.cancel = context.WithCancelCause(t.ctx)
	s.eng = stream.New(cfg, t.reaper, src, sink, t.poke)
	t.mu.Lock()
	t.insert(s)
	t.mu.Unlock()
	t.wg.Add(1)
	go t.runSession(s)
	if !s.streamMode() {
		s.log.Info("session opened", "tty", s.tty, "prompt", s.prompt)
	}
	t.poke()
	return s, nil
}

// newSession is the entry name, not yet open: stream mode's (the empty
// name) has DIR, the agent's roles and log.
func (t *Table) newSession(name string) *session {
	s := &session{name: name, files: t.cfg.Dir, roles: t.cfg.Roles, log: t.log, started: time.Now().UTC(),
		done: make(chan struct{})}
	if !s.streamMode() {
		s.roles, s.log = follow.NewRoles(), t.log.With("session", name)
	}
	return s
}

// places is where entry s is: its directory, its FIFOs' roles and its
// log, DIR/replies, and the agent's cgroups; stream mode's FIFOs made
// again are the agent's to remove (Config.Created).
func (t *Table) places(s *session) config.Places {
	at := config.Places{Dir: s.files, Replies: t.cfg.Replies, Roles: s.roles, Cgroups: t.cfg.Cgroups, Log: s.log}
	if s.streamMode() {
		at.Created = t.cfg.Created
	}
	return at
}

// answerOpen answers an open once the session's child is past its
// start (its engine's Ready event: with a prompt, once it showed its
// prompt; else once it was seen waiting for its input, or ran for
// config.SessionFirstRun), or with an error frame when it could not start or ended
// before, or when that did not come within the line's timeout (the
// session stays open). Nothing is polled: it waits for the two events,
// Ready and the session's end, and its timeout. reused says the line
// reused s, which an earlier open started.
func (t *Table) answerOpen(s *session, ctl protocol.ParsedControl, reply *fifo.Reply, reused bool) {
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
		t.write(ctl.ID, reply, protocol.AppendOpenError(nil, ctl.ID, msg, 0, true))
		return
	}
	if !closed(s.eng.Ready()) { // it ended before it was ready
		t.write(ctl.ID, reply, openFailed(s, ctl.ID))
		return
	}
	if !closed(s.done) {
		t.flush() // the status file lists it before the answer says so
	}
	t.write(ctl.ID, reply, protocol.AppendOpened(nil, ctl.ID, s.eng.Pid(), reused))
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
		return protocol.AppendOpenError(nil, id, fmt.Sprintf("session %s: %v", s.name, se), se.Code(), false)
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
