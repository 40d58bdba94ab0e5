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
// counts, not by a snapshot to compare: its engine's Changes, its
// closing flag and its roles' Changes (the FIFOs it serves), read before
// its snapshot is taken (see stream.Engine.Changes), and what time
// alone changes (a restart leaving the restart window) is rendered again
// every time while it shows.

// renderer holds the sessions' parts as last encoded, and the array as
// last joined; its lock is taken by one rendering at a time (the status
// file's writer, a list).
type renderer struct {
	mu sync.Mutex
	// array is the array as last joined, of the table's sessions at
	// order; it is never changed, only replaced.
	array json.RawMessage
	order uint64
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
	n := s.eng.Changes() + s.roles.Changes() // roles: the FIFOs its status names
	if s.closing.Load() {                    // set once, never cleared
		n++
	}
	return n
}

// sessionsJSON is the "sessions" array of every open session, by name:
// the array joined last, when no session was encoded again and none
// opened or closed since; it is never changed.
func (t *Table) sessionsJSON() (json.RawMessage, error) {
	all, order := t.byName()
	r := &t.render
	r.mu.Lock()
	defer r.mu.Unlock()
	fresh := r.array == nil || r.order != order
	size := 2
	for _, s := range all {
		again, err := r.encode(s)
		if err != nil {
			return nil, err
		}
		fresh = fresh || again
		size += len(s.part.json) + 1
	}
	if !fresh {
		return r.array, nil
	}
	b := append(make([]byte, 0, size), '[')
	for i, s := range all {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, s.part.json...)
	}
	r.array, r.order = append(b, ']'), order
	return r.array, nil
}

// encode encodes s's part of the array again when s changed since it
// last was, or shows what time alone changes, and says whether it did.
func (r *renderer) encode(s *session) (bool, error) {
	n := s.changes() // before the snapshot: a change after it moves it again
	if s.part.json != nil && s.part.changes == n && !s.part.timed {
		return false, nil
	}
	st := asSessions([]entryStatus{s.describe()})[0]
	b, err := json.Marshal(st)
	if err != nil {
		return false, err
	}
	r.encoded++
	s.part = part{json: b, changes: n, timed: st.Child.RecentRestarts > 0}
	return true, nil
}

// byName is every open session, by name, and how many times sessions
// were opened or closed so far.
func (t *Table) byName() ([]*session, uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.order), t.reorders
}

// insert puts s in the table, in its order by name; t.mu is held.
func (t *Table) insert(s *session) {
	t.sessions[s.name] = s
	i, _ := slices.BinarySearchFunc(t.order, s.name, compareName)
	t.order = slices.Insert(t.order, i, s)
	t.reorders++
}

// remove takes s out of the table; t.mu is held.
func (t *Table) remove(s *session) {
	delete(t.sessions, s.name)
	if i, found := slices.BinarySearchFunc(t.order, s.name, compareName); found {
		t.order = slices.Delete(t.order, i, i+1)
	}
	t.reorders++
}

func compareName(s *session, name string) int { return strings.Compare(s.name, name) }
