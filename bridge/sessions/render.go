//go:build linux

package sessions

import (
	"encoding/json"
	"slices"
	"strings"
	"sync"
)

// This file renders sessions mode's "sessions" array, the status file's
// and a list's answer: each session's part is encoded once per change of
// the session and kept, so that a rewrite of the status file (every
// status.Interval, and at every change of any session) encodes only the
// sessions that changed since the last one, and an idle session costs a
// rewrite the copy of its bytes. Whether a session changed is told by
// counts, not by a snapshot to compare: its engine's Changes and its
// closing flag, read before its snapshot is taken (see
// stream.Engine.Changes), and what time alone changes (a restart leaving
// the restart window) is rendered again every time while it shows.

// renderer holds the sessions' parts as last encoded; its lock is taken
// by one rendering at a time (the status file's writer, a list).
type renderer struct {
	mu sync.Mutex
	// encoded counts the sessions encoded, for tests.
	encoded uint64
}

// part is one session's part of the array as last encoded, under the
// renderer's lock.
type part struct {
	json    []byte // nil until first encoded
	changes uint64 // the session's changes when it was
	timed   bool   // it shows what time alone changes: encode it every time
}

// changes is what moves whenever s's part of the array changes, but for
// what time alone changes (see stream.Engine.Changes).
func (s *session) changes() uint64 {
	n := s.eng.Changes()
	if s.closing.Load() { // set once, never cleared
		n++
	}
	return n
}

// sessionsJSON is the "sessions" array of every open session, by name.
func (t *Table) sessionsJSON() (json.RawMessage, error) {
	all := t.byName()
	t.render.mu.Lock()
	defer t.render.mu.Unlock()
	b := make([]byte, 0, 2+len(all)*t.render.sizeHint(all))
	b = append(b, '[')
	for i, s := range all {
		p, err := t.render.part(s)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, p...)
	}
	return append(b, ']'), nil
}

// sizeHint is the length of the first session's part, a guess at every
// part's, for the array's buffer.
func (r *renderer) sizeHint(all []*session) int {
	if len(all) == 0 {
		return 0
	}
	return len(all[0].part.json) + 1
}

// part is s's part of the array, encoded again only when s changed
// since it last was, or shows what time alone changes.
func (r *renderer) part(s *session) ([]byte, error) {
	n := s.changes() // before the snapshot: a change after it moves it again
	if s.part.json != nil && s.part.changes == n && !s.part.timed {
		return s.part.json, nil
	}
	st := asSessions([]entryStatus{s.describe()})[0]
	b, err := json.Marshal(st)
	if err != nil {
		return nil, err
	}
	r.encoded++
	s.part = part{json: b, changes: n, timed: st.Child.RecentRestarts > 0}
	return b, nil
}

// byName is every open session, by name.
func (t *Table) byName() []*session {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.order)
}

// insert puts s in the table, in its order by name; t.mu is held.
func (t *Table) insert(s *session) {
	t.sessions[s.name] = s
	i, _ := slices.BinarySearchFunc(t.order, s.name, func(e *session, name string) int { return strings.Compare(e.name, name) })
	t.order = slices.Insert(t.order, i, s)
}

// remove takes s out of the table; t.mu is held.
func (t *Table) remove(s *session) {
	delete(t.sessions, s.name)
	if i, found := slices.BinarySearchFunc(t.order, s.name, func(e *session, name string) int { return strings.Compare(e.name, name) }); found {
		t.order = slices.Delete(t.order, i, i+1)
	}
}
