//go:build linux

package status

import (
	"bytes"
	"errors"
)

// This file skims JSON: it finds where a value ends without decoding
// it, a loop over its bytes that only follows strings and nesting. A
// client that reads the status file of an agent with many sessions open
// decodes all but the "sessions" array, which it skims, and then the one
// session it asks about (decode.go): encoding/json would check and
// decode every session first, at a cost that grows with the sessions
// open.

// errSkim says the bytes skimmed are not JSON (as far as a skim sees).
var errSkim = errors.New("not a JSON value")

// skipSpace returns the index of the first byte at or after i that is
// not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just after the string that begins at
// b[i], a quote.
func skipString(b []byte, i int) (int, error) {
	i++ // the opening quote
	for {
		j := bytes.IndexAny(b[i:], `"\`)
		if j < 0 {
			return 0, errSkim
		}
		i += j
		if b[i] == '"' {
			return i + 1, nil
		}
		i += 2 // a backslash and the byte it escapes
	}
}

// skipValue returns the index just after the value that begins at b[i]
// (no white space before it): a string, an object or an array with all
// it holds, or a number or literal.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSkim
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		return skipNested(b, i)
	}
	start := i
	for i < len(b) && !endsLiteral(b[i]) {
		i++
	}
	if i == start {
		return 0, errSkim
	}
	return i, nil
}

// endsLiteral says whether c ends a number or a literal.
func endsLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\r', '\n':
		return true
	}
	return false
}

// skipNested returns the index just after the object or array that
// begins at b[i], whatever it nests. One loop over the bytes, strings
// included, is what makes a skim cheaper than a decode.
func skipNested(b []byte, i int) (int, error) {
	depth, quoted := 0, false
	for ; i < len(b); i++ {
		c := b[i]
		if quoted {
			switch c {
			case '\\':
				i++ // the byte it escapes
			case '"':
				quoted = false
			}
			continue
		}
		switch c {
		case '"':
			quoted = true
		case '{', '[':
			depth++
		case '}', ']':
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		}
	}
	return 0, errSkim
}

// eachElement calls f with each element of the JSON array b, as it is
// written, until f returns true.
func eachElement(b []byte, f func(elem []byte) bool) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return errSkim
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return nil
	}
	for {
		end, err := skipValue(b, i)
		if err != nil {
			return err
		}
		if f(b[i:end]) {
			return nil
		}
		i = skipSpace(b, end)
		switch {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == ']':
			return nil
		default:
			return errSkim
		}
	}
}

// span is where a member of an object is in its bytes: from its key's
// opening quote (start) to the end of its value (end), which begins at
// value.
type span struct{ start, value, end int }

// member finds the first member key of the JSON object b; found is
// false when b has none. The key is compared as written, escapes and
// all, and nothing after that member is skimmed: a file with the key
// twice, which no agent writes, is read as having the first (where
// encoding/json takes the last).
func member(b []byte, key string) (m span, found bool, err error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return m, false, errSkim
	}
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		var at span
		keyEnd, colon, err := skipKey(b, i)
		if err != nil {
			return m, false, err
		}
		at.start, at.value = i, skipSpace(b, colon+1)
		if at.end, err = skipValue(b, at.value); err != nil {
			return m, false, err
		}
		if string(b[i+1:keyEnd-1]) == key {
			return at, true, nil
		}
		i = skipSpace(b, at.end)
		if i < len(b) && b[i] == ',' {
			i = skipSpace(b, i+1)
		} else if i >= len(b) || b[i] != '}' {
			return m, false, errSkim
		}
	}
	if i >= len(b) {
		return m, false, errSkim
	}
	return m, false, nil
}

// skipKey skims the key that begins at b[i]: it returns the index just
// after its string, and that of the colon after it.
func skipKey(b []byte, i int) (end, colon int, err error) {
	if i >= len(b) || b[i] != '"' {
		return 0, 0, errSkim
	}
	if end, err = skipString(b, i); err != nil {
		return 0, 0, err
	}
	colon = skipSpace(b, end)
	if colon >= len(b) || b[colon] != ':' {
		return 0, 0, errSkim
	}
	return end, colon, nil
}
