//go:build linux

package status

import (
	"encoding/json"
	"io"
	"os"
	"slices"

	"github.com/fifobridge/fifobridge/internal/jsonskim"
)

// decode decodes the bytes of a status file: every member but "sessions"
// into s's fields, and the "sessions" array, skimmed (package jsonskim),
// into s.SessionsJSON as it is written, for Session to decode the one
// asked for. Bytes the skim does not take are left to encoding/json,
// which says what is wrong with them.
func decode(b []byte) (Status, error) {
	var s Status
	rest, sessions, found, err := jsonskim.Cut(b, "sessions")
	if err != nil {
		err = json.Unmarshal(b, &s)
		return s, err
	}
	if err := json.Unmarshal(rest, &s); err != nil {
		return s, err
	}
	if found {
		s.SessionsJSON = sessions
	}
	return s, nil
}

// headChunk is what decodeHead reads at a time: an agent's own fields
// take a few hundred bytes.
const headChunk = 4096

// decodeHead reads f up to its "sessions" member, at most limit bytes
// when limit is not 0, and decodes all before it (jsonskim.Head): the
// sessions are neither read nor decoded. Bytes the skim does not take
// are left to encoding/json, which says what is wrong with them.
func decodeHead(f *os.File, limit int) (Status, error) {
	var s Status
	b := make([]byte, 0, headChunk)
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, cap(b))
		}
		free := cap(b)
		if limit > 0 {
			free = min(free, limit)
		}
		n, err := f.Read(b[len(b):free])
		b = b[:len(b)+n]
		if err != nil && err != io.EOF {
			return s, err
		}
		head, _, herr := jsonskim.Head(b, "sessions")
		if herr == nil || err == io.EOF || len(b) == limit {
			if herr != nil {
				head = b
			}
			return s, json.Unmarshal(head, &s)
		}
	}
}

// Session returns session name as s lists it, and whether s lists it.
// Of a status file read (ReadAt, ReadOwnedAt, Read) only that session
// is decoded: the array is skimmed for the element of that name (named),
// which alone is decoded.
func (s Status) Session(name string) (Session, bool) {
	if s.SessionsJSON == nil {
		for _, sess := range s.Sessions {
			if sess.Name == name {
				return sess, true
			}
		}
		return Session{}, false
	}
	var found Session
	ok := false
	jsonskim.Elements(s.SessionsJSON, func(elem []byte) bool {
		if !named(elem, name) {
			return false
		}
		var sess Session
		if json.Unmarshal(elem, &sess) == nil && sess.Name == name {
			found, ok = sess, true
		}
		return ok
	})
	return found, ok
}

// named says whether the object elem may be session name's: its "name"
// is name, or the skim cannot tell (decoding elem then does).
func named(elem []byte, name string) bool {
	v, found, err := jsonskim.Find(elem, "name")
	if err != nil || !found {
		return true
	}
	got, err := jsonskim.Text(v)
	return err != nil || got == name
}
