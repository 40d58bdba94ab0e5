// Package jsonstr appends strings as JSON string literals, for the agent's
// hand-written encoders (exec frames, the status file), which run where
// encoding/json's reflection would cost more than the bytes.
//
// Guarantee: for s valid UTF-8, Append(b, s) appends a JSON string that
// every JSON decoder reads back as s. Only what JSON requires is escaped:
// the quote, the backslash and the control characters below U+0020.
package jsonstr

import "unicode/utf8"

const hex = "0123456789abcdef"

// Append appends s, which must be valid UTF-8, as a JSON string.
func Append[T ~string | ~[]byte](b []byte, s T) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		b = append(b, s[start:i]...)
		switch c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		default:
			b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
		start = i + 1
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Valid returns s with every byte that is not part of valid UTF-8 replaced
// by U+FFFD, one for each byte, as encoding/json replaces them.
func Valid(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	b := make([]byte, 0, len(s)+8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, "\uFFFD"...)
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}
