//go:build linux

package sessions

import (
	"encoding/json"
	"time"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/status"
)

// This file is the table's status: one list of its entries, rendered in
// the contract's two shapes, stream mode's one entry as "child" and
// sessions mode's as "sessions".

// entryStatus is one entry's status, taken once: its engine's snapshot
// (state, child, turn, transcript, -tee copy), and what the entry is.
type entryStatus struct {
	name    string
	engine  status.Status
	started time.Time
	tty     bool
	inputs  map[string]status.FIFO
	closing bool
}

// Snapshot is the table's part of the status file: stream mode's one
// entry as "child", sessions mode's entries as "sessions", already
// encoded (render.go).
func (t *Table) Snapshot() status.Status {
	if t.single() {
		return asChild(t.list())
	}
	st := status.Status{Mode: status.ModeSessions, State: string(child.StateRunning)}
	b, err := t.sessionsJSON()
	if err != nil { // encoding/json fails on no value a status.Session holds
		t.log.Error("cannot encode the sessions for the status file", "err", err)
		b = json.RawMessage("[]")
	}
	st.SessionsJSON = b
	if t.stopping() {
		st.State = string(child.StateStopping)
	}
	return st
}

// asChild renders stream mode's one entry: the agent's state is its
// child's, which is "child" (with its turn); its transcript and -tee copy
// are the agent's. Before the entry is open, the agent is starting.
func asChild(all []entryStatus) status.Status {
	if len(all) == 0 {
		return status.Status{State: string(child.StateStarting)}
	}
	return all[0].engine
}

// asSessions renders sessions mode's entries, each a session with its
// own turn and transcript, and "stopping" once its close began.
func asSessions(all []entryStatus) []status.Session {
	out := make([]status.Session, 0, len(all))
	for _, e := range all {
		snap := e.engine
		st := status.Session{Name: e.name, PID: snap.Child.PID, State: snap.State, StartedAt: e.started,
			Restarts: snap.Child.Restarts, Tty: e.tty, Child: snap.Child, Turn: snap.Child.Turn,
			Transcript: snap.Transcript, Inputs: e.inputs}
		st.Child.Turn = nil // the session's own "turn" says it
		if e.closing {
			st.State = string(child.StateStopping)
		}
		out = append(out, st)
	}
	return out
}

// list is the status of every entry, by name.
func (t *Table) list() []entryStatus {
	all, _ := t.byName()
	out := make([]entryStatus, 0, len(all))
	for _, s := range all {
		out = append(out, s.describe())
	}
	return out
}

// describe is s's status now.
func (s *session) describe() entryStatus {
	return entryStatus{name: s.name, engine: s.eng.Snapshot(), started: s.started, tty: s.tty,
		inputs: s.roles.Inputs(), closing: s.closing.Load()}
}

// stopping reports whether the table's stop began.
func (t *Table) stopping() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ctx != nil && t.ctx.Err() != nil
}
