package protocol

import (
	"unicode"
	"unicode/utf8"

	"github.com/fifobridge/fifobridge/internal/jsonskim"
)

// A key given twice is how a spliced line would redirect another's
// request: encoding/json keeps the last of two "reply" members, and
// matches keys without regard to case ("Reply", "REPLY" and "reply" are
// one field). So a line that gives any top-level key twice, as
// encoding/json matches keys, is refused as damaged.

// duplicateKey returns the first top-level key of the JSON object obj,
// which must be valid JSON (json.Unmarshal took it), that an earlier key
// of obj matches as encoding/json matches keys, and whether there is one.
// It reads obj once, without decoding the values (package jsonskim).
func duplicateKey(obj []byte) (string, bool) {
	seen := make(map[string]struct{})
	var dup string
	found := false
	jsonskim.Members(obj, func(raw, _ []byte) bool {
		key, _ := jsonskim.Text(raw) // valid: json.Unmarshal read it before
		folded := foldKey(key)
		if _, found = seen[folded]; found {
			dup = key
			return true
		}
		seen[folded] = struct{}{}
		return false
	})
	return dup, found
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
