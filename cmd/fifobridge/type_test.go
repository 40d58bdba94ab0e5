//go:build linux

package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// type's text: TEXT joined by spaces and always a newline (none with
// -n); stdin as it is, with a newline only when it has none at its end
// (none with -n).
func TestTypedText(t *testing.T) {
	for _, tc := range []struct {
		text    []string
		stdin   string
		newline bool
		want    string
	}{
		{[]string{"ls", "-l"}, "", true, "ls -l\n"},
		{[]string{"ls", "-l"}, "", false, "ls -l"},
		{[]string{""}, "", true, "\n"},
		{[]string{"a\n"}, "", true, "a\n\n"},
		{nil, "from stdin\n", true, "from stdin\n"},
		{nil, "from stdin", true, "from stdin\n"},
		{nil, "from stdin", false, "from stdin"},
		{nil, "", true, "\n"},
		{nil, "", false, ""},
	} {
		r, w, err := os.Pipe()
		require.NoError(t, err)
		_, err = w.WriteString(tc.stdin)
		require.NoError(t, err)
		w.Close()
		saved := os.Stdin
		os.Stdin = r
		got, err := typedText(tc.text, tc.newline)
		os.Stdin = saved
		r.Close()
		require.NoError(t, err)
		require.Equal(t, tc.want, string(got), "text %q, stdin %q, newline %v", tc.text, tc.stdin, tc.newline)
	}
}
