//go:build linux

package conversation

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// How a turn ended, as its end frame says: the prompt's status and
// groups, an incomplete input, a child that was not ready.

// The prompt's named groups are in the end frame, and the group status,
// when it shows digits, is its status; a prompt without them has neither.
func TestPromptStatus(t *testing.T) {
	h := newHarness(t, func(c *Config) {
		c.Prompt = regexp.MustCompile(`^\[(?P<status>\d+)\](?: (?P<cwd>/\S*))? > $`)
	})
	h.out("[0] > ")
	h.waitReady()
	a := h.ask("a", "false", nil)
	require.Equal(t, "false\n", h.input())
	h.out("no\n[7] /src > ")
	got, last := a.result()
	require.Equal(t, "no\n", got)
	require.True(t, last.Ready, last.line)
	require.NotNil(t, last.Status, last.line)
	require.Equal(t, 7, *last.Status)
	require.Equal(t, map[string]string{"status": "7", "cwd": "/src"}, last.Prompt)

	b := h.ask("b", "true", nil)
	require.Equal(t, "true\n", h.input())
	h.out("[0] > ")
	_, last = b.result()
	require.Equal(t, 0, *last.Status, last.line)
	require.Equal(t, map[string]string{"status": "0"}, last.Prompt, "a group that took no part is left out")

	// Quiet time ends a turn without a prompt: no status.
	c := h.ask("c", "wait", map[string]string{"quiet": "50ms"})
	require.Equal(t, "wait\n", h.input())
	_, last = c.result()
	require.True(t, last.Ready, last.line)
	require.Nil(t, last.Status, last.line)
	require.Nil(t, last.Prompt, last.line)
}

// A continuation prompt after the whole input ends the turn as incomplete:
// the child is interrupted, the asker gets "incomplete", the status counts
// it, and the next turn starts only once the child shows its prompt
// again. A continuation prompt between the input's lines is no end.
func TestIncompleteTurn(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Continuation = regexp.MustCompile(`^\.\. $`) })
	h.ready()
	a := h.ask("a", "for x:", nil)
	require.Equal(t, "for x:\n", h.input())
	h.out(".. ")
	got, last := a.result()
	require.Empty(t, got)
	require.Equal(t, "end", last.Type, last.line)
	require.True(t, last.Incomplete, last.line)
	require.False(t, last.Ready, last.line)
	h.interrupted()
	st, _ := h.c.Snapshot()
	require.Equal(t, uint64(1), st.Incomplete)
	require.Equal(t, uint64(0), st.Answered)
	require.Equal(t, "busy", st.State)

	b := h.ask("b", "next", nil)
	h.waitQueued(1)
	h.noInput(100 * time.Millisecond) // not at its prompt yet
	h.out("KeyboardInterrupt\n" + testPrompt)
	require.Equal(t, "next\n", h.input())
	h.out("fine\n" + testPrompt)
	b.requireAnswer("fine\n")

	// A block of two lines: the continuation prompt for the second is no
	// end, the one after it is.
	c := h.ask("c", "for x:\n  y\n", nil)
	require.Equal(t, "for x:\n  y\n", h.input())
	h.out(".. .. ")
	_, last = c.result()
	require.True(t, last.Incomplete, last.line)
	h.interrupted()
	h.out(testPrompt)
	d := h.ask("d", "for x:\n  y\n\n", nil)
	require.Equal(t, "for x:\n  y\n\n", h.input())
	h.out(".. .. y\n" + testPrompt)
	d.requireAnswer("y\n")
	st, _ = h.c.Snapshot()
	require.Equal(t, uint64(2), st.Incomplete)
}

// An ask past its limit while the child has not been ready since it
// started is told so, with the prompt expression and the child's last
// line, escapes removed.
func TestNotReadySinceStart(t *testing.T) {
	h := newHarness(t, nil)
	h.out("welcome\n\x1b[1mroot@host:/# \x1b[0m")
	a := h.ask("a", "never", map[string]string{"timeout": "200ms"})
	f := a.requireLast("end")
	require.True(t, f.TimedOut && f.Queued, f.line)
	require.Regexp(t, `^the child has shown no prompt matching '\^> \$' since it started [0-9.]+m?s ago; `+
		`its last line is "root@host:/# "$`, f.NotReady)
	h.noInput(50 * time.Millisecond)
}

// A turn interrupted past its limit is not itself named (the child was
// ready when it began); an ask that then waits past its limit for a child
// that never shows its prompt again is, with what the interrupted work
// wrote last.
func TestNotReadySinceInterrupt(t *testing.T) {
	h := newHarness(t, nil)
	h.ready()
	a := h.ask("a", "sleep", map[string]string{"timeout": "200ms"})
	require.Equal(t, "sleep\n", h.input())
	h.interrupted()
	f := a.requireLast("end")
	require.True(t, f.TimedOut, f.line)
	require.False(t, f.Queued, "a turn that began: %s", f.line)
	require.Empty(t, f.NotReady, "a turn that began at a prompt")

	h.out("still going\n")
	b := h.ask("b", "next", map[string]string{"timeout": "200ms"})
	f = b.requireLast("end")
	require.True(t, f.TimedOut && f.Queued, f.line)
	require.Regexp(t, `^the child has shown no prompt matching '\^> \$' since the turn before was interrupted [0-9.]+m?s ago; `+
		`its last line is "still going"$`, f.NotReady)

	// Once it shows its prompt, a wait behind a long turn is no longer
	// the child's fault.
	h.out(testPrompt)
	c := h.ask("c", "long", nil)
	require.Equal(t, "long\n", h.input())
	d := h.ask("d", "behind", map[string]string{"timeout": "200ms"})
	f = d.requireLast("end")
	require.True(t, f.TimedOut && f.Queued, "an ask that waited behind a turn: %s", f.line)
	require.Empty(t, f.NotReady, f.line)
	h.out(testPrompt)
	c.requireAnswer("")
}

// After an incomplete turn whose input the child keeps through the
// interrupt (it shows its continuation prompt again), an ask past its
// limit names that input, at most its last 80 bytes, and fifobridge type
// as the way to finish it; the status file says the input was
// incomplete without holding it. Once the child shows its prompt, the
// input is forgotten.
func TestIncompleteInputNamed(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Continuation = regexp.MustCompile(`^\.\. $`) })
	for _, input := range []string{"select 1", strings.Repeat("x", 50) + strings.Repeat("é", 50) + "\n"} {
		h.ready()
		a := h.ask("a"+nth("", len(input)), input, nil)
		h.input()
		h.out(".. ")
		_, last := a.result()
		require.True(t, last.Incomplete, last.line)
		h.interrupted()
		h.out("^C\n.. ") // kept

		quoted := `"select 1"`
		if input != "select 1" {
			quoted = `"` + strings.Repeat("é", 40) + `"` // the last 80 bytes, newline dropped
		}
		b := h.ask("b"+nth("", len(input)), "next", map[string]string{"timeout": "100ms"})
		f := b.requireLast("end")
		require.True(t, f.TimedOut && f.Queued, f.line)
		require.Regexp(t, `since the turn before was interrupted [0-9.]+m?s ago; its last line is "\.\. "; `+
			`the input of the turn before, `+regexp.QuoteMeta(quoted)+`, was incomplete and the child may still hold it: `+
			`finish it with fifobridge type$`, f.NotReady)

		st, _ := h.c.Snapshot()
		require.NotNil(t, st.Unready)
		require.True(t, st.Unready.Incomplete)
		js, err := json.Marshal(st)
		require.NoError(t, err)
		require.Contains(t, string(js), `"incomplete":true`)
		require.NotContains(t, string(js), "select 1", "the status file holds no input")
		require.NotContains(t, string(js), "xxxx", "the status file holds no input")
		h.noInput(50 * time.Millisecond)
		h.out("\n1\n") // the rest typed: the child answers, then shows its prompt
	}
	h.ready()
	c := h.ask("c", "long", nil)
	require.Equal(t, "long\n", h.input())
	d := h.ask("d", "behind", map[string]string{"timeout": "100ms"})
	f := d.requireLast("end")
	require.True(t, f.TimedOut && f.Queued, f.line)
	require.Empty(t, f.NotReady, "the child was ready since: %s", f.line)
	h.out(testPrompt)
	c.requireAnswer("")
}

// A last line longer than 80 bytes is quoted by its end; a child that
// showed nothing is said to.
func TestNotReadyLastLine(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Prompt = regexp.MustCompile(`it's ^NEVER$`) })
	a := h.ask("a", "x", map[string]string{"timeout": "100ms"})
	f := a.requireLast("end")
	require.Contains(t, f.NotReady, `matching "it's ^NEVER$" since it started`)
	require.True(t, strings.HasSuffix(f.NotReady, "; it has shown no line"), f.NotReady)

	h.out(strings.Repeat("a", 50) + strings.Repeat("b", 80))
	b := h.ask("b", "x", map[string]string{"timeout": "100ms"})
	f = b.requireLast("end")
	require.True(t, strings.HasSuffix(f.NotReady, `its last line is "`+strings.Repeat("b", 80)+`"`), f.NotReady)
}

// The settle period is the conversation's: with an hour of it, a prompt
// does not make the child ready; at once (SettleAtOnce), it does.
func TestSettle(t *testing.T) {
	slow := newHarness(t, func(c *Config) { c.Settle = time.Hour })
	slow.out(testPrompt)
	a := slow.ask("a", "x", map[string]string{"timeout": "300ms"})
	f := a.requireLast("end")
	require.True(t, f.TimedOut, f.line)
	require.Contains(t, f.NotReady, `its last line is "> "`, "the prompt is shown, but not settled")
}
