//go:build linux

package sessions

import (
	"slices"
	"strings"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/status"
)

// Snapshot is the table's part of the status file.
func (t *Table) Snapshot() status.Status {
	if t.single() {
		if s := t.session(""); s != nil {
			return s.eng.Snapshot()
		}
		return status.Status{State: string(child.StateStarting)}
	}
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
