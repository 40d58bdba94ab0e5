package jsonstr

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzAppend: whatever valid UTF-8 goes in, encoding/json reads the same
// string back, from the string and the byte-slice forms alike.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "a", `"\`, "\x00\x1f\x7f", "\b\f\n\r\t", "<>&", "é日本🙂", "\u2028\u2029"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return
		}
		for _, enc := range [][]byte{Append(nil, s), Append(nil, []byte(s))} {
			var got string
			if err := json.Unmarshal(enc, &got); err != nil {
				t.Fatalf("%q: %s is not JSON: %v", s, enc, err)
			}
			if got != s {
				t.Fatalf("%q came back as %q", s, got)
			}
		}
	})
}
