package ttytext_test

import (
	"bytes"
	"math/rand/v2"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/fifobridge/fifobridge/internal/ttytext"
	"github.com/fifobridge/fifobridge/turn"
)

func clean(parts ...string) string {
	var c ttytext.Cleaner
	var out []byte
	for _, p := range parts {
		out = c.Clean(out, []byte(p))
	}
	return string(c.Flush(out))
}

func TestClean(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain\n", "plain\n"},
		{"a\r\nb\r\n", "a\nb\n"},
		{"\rat start\n", "at start\n"},
		{"\x1b[1;31mred\x1b[0m\r\n", "red\n"},
		{"50%\r60%\r\n", "50%\r60%\n"},
		{"\x1b]0;title\x07$ ", "$ "},
		{"\x1b]0;title\x1b\\$ ", "$ "},
		{"x\r\x1b[K\r\n", "x\n"},
		{"\x1b(Bok\n", "ok\n"},
		{"\x1b\x01tab\n", "\x01tab\n"}, // a control byte cancels the ESC and is kept
		{"a\x08b\x07c\n", "a\x08b\x07c\n"},
		{"tail\r", "tail\r"}, // held until the end, then text
	} {
		require.Equal(t, tc.want, clean(tc.in), "%q", tc.in)
		// Cut anywhere, the same.
		for i := 0; i <= len(tc.in); i++ {
			require.Equal(t, tc.want, clean(tc.in[:i], tc.in[i:]), "%q cut at %d", tc.in, i)
		}
	}
}

// TestCleanHoldsNothingVisible: what shows is handed on at once, a line
// without its newline (a prompt, a question) too.
func TestCleanHoldsNothingVisible(t *testing.T) {
	var c ttytext.Cleaner
	require.Equal(t, "$ ", string(c.Clean(nil, []byte("\x1b[0m$ "))))
	require.Equal(t, "Proceed? [Y/n] ", string(c.Clean(nil, []byte("\r\nProceed? [Y/n] \x1b[?25h"))[1:]))
}

// TestCleanAsAskCleans: on any terminal output whose lines a turn would
// not cut (at most turn.MaxHold bytes), the Cleaner's text is the
// answer a conversation's tracker gives in terminal mode, cut into calls
// anywhere: watch and ask clean alike.
func TestCleanAsAskCleans(t *testing.T) {
	never := regexp.MustCompile(`[^\x00-\x{10FFFF}]`)
	atoms := []string{"a", "text ", "\r", "\n", "\r\n", "\x1b[1;31m", "\x1b[K", "\x1b]0;t\x07", "\x1b]2;x\x1b\\", "\x1b(B",
		"\x1b", "[", "\x07", "\x08", "\t", "é", "\x1b\x01", "\x1bP1$r\x1b\\", "\x1b[?2004h", "> "}
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 2000 {
		var in []byte
		line := 0
		for range rng.IntN(60) {
			a := atoms[rng.IntN(len(atoms))]
			if line+len(a) >= turn.MaxHold/2 {
				a = "\n"
			}
			in = append(in, a...)
			if i := bytes.LastIndexByte(in, '\n'); i >= 0 {
				line = len(in) - i - 1
			} else {
				line = len(in)
			}
		}
		tr, err := turn.New(turn.Config{Prompt: never, Terminal: true, Echo: turn.EchoOff})
		require.NoError(t, err)
		now := time.Unix(1, 0)
		var want []byte
		take := func(segs []turn.Segment) {
			for _, s := range segs {
				if s.Kind == turn.Answer {
					want = append(want, s.Data...)
				}
			}
		}
		take(tr.Begin(nil, 0, now))
		cut := rng.IntN(len(in) + 1)
		take(tr.Output(in[:cut], now))
		take(tr.Output(in[cut:], now))
		take(tr.EOF())

		var c ttytext.Cleaner
		got := c.Clean(nil, in[:cut])
		got = c.Flush(c.Clean(got, in[cut:]))
		require.Equal(t, string(want), string(got), "case %d: %q", n, in)
	}
}
