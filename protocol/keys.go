package protocol

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A key given twice is how a spliced line would redirect another's
// request: encoding/json keeps the last of two "reply" members, and
// matches keys without regard to case ("Reply", "REPLY" and "reply" are
// one field). So a line that gives any top-level key twice, as
// encoding/json matches keys, is refused as damaged.

// duplicateKey returns the first top-level key of the JSON object obj,
// which must be valid JSON (json.Unmarshal took it), that an earlier key
// of obj matches as encoding/json matches keys, and whether there is one.
// It reads obj once, without decoding the values.
func duplicateKey(obj []byte) (string, bool) {
	s := scanner{b: obj}
	s.space()
	if !s.byte('{') {
		return "", false
	}
	seen := make(map[string]struct{})
	for {
		s.space()
		if s.i >= len(s.b) || s.b[s.i] == '}' {
			return "", false
		}
		s.byte(',')
		s.space()
		key := s.key()
		folded := foldKey(key)
		if _, dup := seen[folded]; dup {
			return key, true
		}
		seen[folded] = struct{}{}
		s.space()
		s.byte(':')
		s.space()
		s.value()
	}
}

// scanner walks valid JSON; it never fails, and stops at the end of b.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\n' || s.b[s.i] == '\r') {
		s.i++
	}
}

// byte skips c if it comes next.
func (s *scanner) byte(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// key reads a string and returns it unescaped.
func (s *scanner) key() string {
	start := s.i
	s.str()
	raw := s.b[start:s.i]
	if bytes.IndexByte(raw, '\\') < 0 && len(raw) >= 2 {
		return string(raw[1 : len(raw)-1])
	}
	var k string
	json.Unmarshal(raw, &k) // valid: json.Unmarshal read it before
	return k
}

// str skips a string, quotes included.
func (s *scanner) str() {
	s.i++ // the opening quote
	for s.i < len(s.b) {
		q := bytes.IndexByte(s.b[s.i:], '"')
		if q < 0 {
			s.i = len(s.b)
			return
		}
		end := s.i + q
		backslashes := 0
		for j := end - 1; j >= s.i && s.b[j] == '\\'; j-- {
			backslashes++
		}
		s.i = end + 1
		if backslashes%2 == 0 {
			return
		}
	}
}

// value skips one value: a string, an object or array (whatever it
// holds), or a literal or number.
func (s *scanner) value() {
	if s.i >= len(s.b) {
		return
	}
	switch s.b[s.i] {
	case '"':
		s.str()
	case '{', '[':
		depth := 0
		for s.i < len(s.b) {
			switch s.b[s.i] {
			case '"':
				s.str()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			s.i++
			if depth == 0 {
				return
			}
		}
	default:
		for s.i < len(s.b) && strings.IndexByte(",}] \t\r\n", s.b[s.i]) < 0 {
			s.i++
		}
	}
}

// foldKey folds key as encoding/json does when it matches a key to a
// field: two keys match when their folds are equal (bytes.EqualFold).
func foldKey(key string) string {
	b := make([]byte, 0, len(key))
	for _, r := range key {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			b = append(b, byte(r))
			continue
		}
		b = utf8.AppendRune(b, foldRune(r))
	}
	return string(b)
}

// foldRune is the smallest rune of r's fold set.
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}
