package jsonskim

import (
	"bytes"
	"encoding/json"
	"errors"
)

// ErrNotJSON says the bytes skimmed are not JSON, as far as a skim sees.
var ErrNotJSON = errors.New("not a JSON value")

// skipSpace returns the index of the first byte at or after i that is
// not JSON white space.
func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just after the string that begins at
// b[i], a quote: at the first quote after it that an even number of
// backslashes precede (an odd number escapes it).
func skipString(b []byte, i int) (int, error) {
	for i++; i < len(b); i++ {
		q := bytes.IndexByte(b[i:], '"')
		if q < 0 {
			break
		}
		i += q
		k := i - 1
		for b[k] == '\\' { // b[start] is the opening quote: k stops there
			k--
		}
		if (i-1-k)%2 == 0 {
			return i + 1, nil
		}
	}
	return 0, ErrNotJSON
}

// skipValue returns the index just after the value that begins at b[i]
// (no white space before it): a string, an object or an array with all
// it holds, or a number or literal.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, ErrNotJSON
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
		return 0, ErrNotJSON
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

// structural marks the bytes a skim of nested values stops at.
var structural = [256]bool{'"': true, '{': true, '}': true, '[': true, ']': true}

// skipNested returns the index just after the object or array that
// begins at b[i], whatever it nests: a loop that jumps from one
// structural byte to the next, and over strings by their quotes, which
// is what makes a skim cheaper than a decode.
func skipNested(b []byte, i int) (int, error) {
	depth := 0
	for i < len(b) {
		for i < len(b) && !structural[b[i]] {
			i++
		}
		if i == len(b) {
			break
		}
		switch b[i] {
		case '"':
			end, err := skipString(b, i)
			if err != nil {
				return 0, err
			}
			i = end
			continue
		case '{', '[':
			depth++
		default: // '}', ']'
			depth--
			if depth == 0 {
				return i + 1, nil
			}
		}
		i++
	}
	return 0, ErrNotJSON
}

// Elements calls f with each element of the JSON array arr, as written,
// until f returns true.
func Elements(arr []byte, f func(elem []byte) bool) error {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return ErrNotJSON
	}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return nil
	}
	for {
		end, err := skipValue(arr, i)
		if err != nil {
			return err
		}
		if f(arr[i:end]) {
			return nil
		}
		i = skipSpace(arr, end)
		switch {
		case i < len(arr) && arr[i] == ',':
			i = skipSpace(arr, i+1)
		case i < len(arr) && arr[i] == ']':
			return nil
		default:
			return ErrNotJSON
		}
	}
}

// ElementMembers calls f with each member of each element of the JSON
// array arr, n numbering the elements from 0, its key and its value as
// Members gives them, and returns how many elements there are: one skim
// of arr, where Elements and then Members of each element would take
// two. Every element must be an object.
func ElementMembers(arr []byte, f func(n int, key, value []byte)) (int, error) {
	i := skipSpace(arr, 0)
	if i >= len(arr) || arr[i] != '[' {
		return 0, ErrNotJSON
	}
	i = skipSpace(arr, i+1)
	if i < len(arr) && arr[i] == ']' {
		return 0, nil
	}
	for n := 0; ; n++ {
		end, err := membersFrom(arr, i, func(key []byte, m span) bool {
			f(n, key, arr[m.value:m.end])
			return false
		})
		if err != nil {
			return n, err
		}
		i = skipSpace(arr, end)
		switch {
		case i < len(arr) && arr[i] == ',':
			i = skipSpace(arr, i+1)
		case i < len(arr) && arr[i] == ']':
			return n + 1, nil
		default:
			return n, ErrNotJSON
		}
	}
}

// Members calls f with each member of the JSON object obj, its key and
// its value as written (the key's quotes included: Text decodes it),
// until f returns true.
func Members(obj []byte, f func(key, value []byte) bool) error {
	return members(obj, func(key []byte, m span) bool { return f(key, obj[m.value:m.end]) })
}

// Find returns the value, as written, of the first member key of the
// JSON object obj; found is false when obj has none. Nothing after that
// member is skimmed: an object that gives the key twice is read as
// having the first (where encoding/json takes the last).
func Find(obj []byte, key string) (value []byte, found bool, err error) {
	m, found, err := find(obj, key)
	if !found {
		return nil, found, err
	}
	return obj[m.value:m.end], true, nil
}

// Cut returns the JSON object obj without its first member key and the
// comma that parts it from the member before or after it, and that
// member's value as written; found is false, and rest is obj, when obj
// has none. rest is a new slice; value is part of obj.
func Cut(obj []byte, key string) (rest, value []byte, found bool, err error) {
	m, found, err := find(obj, key)
	if !found {
		return obj, nil, found, err
	}
	start, end := m.start, m.end
	before := bytes.TrimRight(obj[:start], " \t\r\n")
	if n := len(before); n > 0 && before[n-1] == ',' {
		start = n - 1
	} else if after := skipSpace(obj, end); after < len(obj) && obj[after] == ',' {
		end = after + 1
	}
	rest = append(append(make([]byte, 0, len(obj)-(end-start)), obj[:start]...), obj[end:]...)
	return rest, obj[m.value:m.end], true, nil
}

// Head returns the JSON object obj closed just before its first member
// key, which it leaves out with every member after it; found is false,
// and head is obj, when obj has no member key. Neither that member's
// value nor anything after it is skimmed, nor need it be there: obj may
// be the first bytes of a longer object. head is a new slice.
func Head(obj []byte, key string) (head []byte, found bool, err error) {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return nil, false, ErrNotJSON
	}
	last := i + 1 // the end of the members kept: after '{', or after a value
	i = skipSpace(obj, i+1)
	for i < len(obj) && obj[i] != '}' {
		keyEnd, colon, err := skipKey(obj, i)
		if err != nil {
			return nil, false, err
		}
		if keyEnd-i == len(key)+2 && string(obj[i+1:keyEnd-1]) == key {
			return append(append(make([]byte, 0, last+1), obj[:last]...), '}'), true, nil
		}
		if i, err = skipValue(obj, skipSpace(obj, colon+1)); err != nil {
			return nil, false, err
		}
		last = i
		i = skipSpace(obj, i)
		switch {
		case i < len(obj) && obj[i] == ',':
			if i = skipSpace(obj, i+1); i < len(obj) && obj[i] == '}' {
				return nil, false, ErrNotJSON
			}
		case i >= len(obj) || obj[i] != '}':
			return nil, false, ErrNotJSON
		}
	}
	if i >= len(obj) {
		return nil, false, ErrNotJSON
	}
	return obj, false, nil
}

// span is where a member of an object is in its bytes: from its key's
// opening quote (start) to the end of its value (end), which begins at
// value.
type span struct{ start, value, end int }

// find finds the first member key of the JSON object obj.
func find(obj []byte, key string) (m span, found bool, err error) {
	err = members(obj, func(k []byte, at span) bool {
		if len(k) == len(key)+2 && string(k[1:len(k)-1]) == key {
			m, found = at, true
		}
		return found
	})
	return m, found, err
}

// members calls f with the key (as written, quotes included) and the
// span of each member of the JSON object obj until f returns true; the
// members after that are not skimmed.
func members(obj []byte, f func(key []byte, m span) bool) error {
	_, err := membersFrom(obj, skipSpace(obj, 0), f)
	return err
}

// membersFrom is members of the object that begins at b[i]; it returns
// the index just after the object, or 0 when f stopped it.
func membersFrom(b []byte, i int, f func(key []byte, m span) bool) (int, error) {
	if i >= len(b) || b[i] != '{' {
		return 0, ErrNotJSON
	}
	i = skipSpace(b, i+1)
	for i < len(b) && b[i] != '}' {
		keyEnd, colon, err := skipKey(b, i)
		if err != nil {
			return 0, err
		}
		m := span{start: i, value: skipSpace(b, colon+1)}
		if m.end, err = skipValue(b, m.value); err != nil {
			return 0, err
		}
		if f(b[i:keyEnd], m) {
			return 0, nil
		}
		i = skipSpace(b, m.end)
		switch {
		case i < len(b) && b[i] == ',':
			if i = skipSpace(b, i+1); i < len(b) && b[i] == '}' {
				return 0, ErrNotJSON // a comma before the end
			}
		case i >= len(b) || b[i] != '}':
			return 0, ErrNotJSON
		}
	}
	if i >= len(b) {
		return 0, ErrNotJSON
	}
	return i + 1, nil
}

// skipKey skims the key that begins at b[i]: it returns the index just
// after its string, and that of the colon after it.
func skipKey(b []byte, i int) (end, colon int, err error) {
	if i >= len(b) || b[i] != '"' {
		return 0, 0, ErrNotJSON
	}
	if end, err = skipString(b, i); err != nil {
		return 0, 0, err
	}
	colon = skipSpace(b, end)
	if colon >= len(b) || b[colon] != ':' {
		return 0, 0, ErrNotJSON
	}
	return end, colon, nil
}

// Text returns the string the JSON string v holds: as written between
// its quotes when that is printable ASCII without an escape, else as
// encoding/json decodes it.
func Text(v []byte) (string, error) {
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' && plain(v[1:len(v)-1]) {
		return string(v[1 : len(v)-1]), nil
	}
	var s string
	err := json.Unmarshal(v, &s)
	return s, err
}

// plain says whether b, between a string's quotes, is printable ASCII
// without an escape (or a quote, which would end the string).
func plain(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c == '"' || c < ' ' || c >= 0x80 {
			return false
		}
	}
	return true
}
