//go:build linux

package status

import (
	"bytes"
	"encoding/json"
)

// decode decodes the bytes of a status file: every member but "sessions"
// into s's fields, and the "sessions" array, skimmed (skim.go), into
// s.SessionsJSON as it is written, for Session to decode the one asked
// for. Bytes the skim does not take are left to encoding/json, which
// says what is wrong with them.
func decode(b []byte) (Status, error) {
	var s Status
	m, found, err := member(b, "sessions")
	if err != nil {
		err = json.Unmarshal(b, &s)
		return s, err
	}
	head := b
	if found {
		head = without(b, m.start, m.end)
	}
	if err := json.Unmarshal(head, &s); err != nil {
		return s, err
	}
	if found {
		s.SessionsJSON = b[m.value:m.end]
	}
	return s, nil
}

// without is the object b without its member b[start:end] and the comma
// that parts it from the one before or after it.
func without(b []byte, start, end int) []byte {
	before := bytes.TrimRight(b[:start], " \t\r\n")
	if n := len(before); n > 0 && before[n-1] == ',' {
		start = n - 1
	} else if after := skipSpace(b, end); after < len(b) && b[after] == ',' {
		end = after + 1
	}
	return append(append(make([]byte, 0, len(b)-(end-start)), b[:start]...), b[end:]...)
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
	eachElement(s.SessionsJSON, func(elem []byte) bool {
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
// is written as name plain, or written otherwise (escaped, or not found
// by the skim), which only decoding elem tells.
func named(elem []byte, name string) bool {
	m, found, err := member(elem, "name")
	if err != nil || !found {
		return true
	}
	v := elem[m.value:m.end]
	for _, c := range v {
		if c == '\\' || c < ' ' || c >= 0x80 {
			return true
		}
	}
	return len(v) >= 2 && v[0] == '"' && string(v[1:len(v)-1]) == name
}
