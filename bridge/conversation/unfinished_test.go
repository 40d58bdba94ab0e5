//go:build linux

package conversation

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// requireOpen fails unless the ask's next frames are answers that make
// want, and the turn is still in progress.
func (h *harness) requireOpen(a *client, want string) {
	h.t.Helper()
	got := ""
	for len(got) < len(want) {
		f := a.next()
		require.Equal(h.t, "answer", f.Type, "ask %s: frame %s after %q", a.id, f.line, got)
		require.NotNil(h.t, f.Data, f.line)
		got += *f.Data
	}
	require.Equal(h.t, want, got)
	st, _ := h.c.Snapshot()
	require.Equal(h.t, "busy", st.State, "the turn ended at a line that is not the prompt")
}

// The question a command asks and waits on (a last line that is not the
// prompt) reaches the asker once the child is seen waiting for input,
// however long -settle is; the turn goes on, and the same ask gets the
// rest of the answer and ends at the prompt.
func TestReaderHandsOnQuestion(t *testing.T) {
	h := withReader(t, always(true), nil)
	h.ready()
	a := h.ask("a", "read", nil)
	require.Equal(t, "read\n", h.input())
	h.out("Enter name: ")
	h.requireOpen(a, "Enter name: ")
	h.c.Typed() // the answer to the question, typed into DIR/in
	h.out("hi bob\n" + testPrompt)
	a.requireAnswer("hi bob\n")
}

// Without a Reader, -settle of quiet hands the question on; the turn goes
// on. Nothing is handed on twice when the prompt completes its line.
func TestSettleHandsOnQuestion(t *testing.T) {
	h := newHarness(t, func(c *Config) { c.Settle = 30 * time.Millisecond })
	h.ready()
	a := h.ask("a", "printf foo", nil)
	require.Equal(t, "printf foo\n", h.input())
	h.out("Proceed? [Y/n] ")
	h.requireOpen(a, "Proceed? [Y/n] ")
	h.c.Typed()
	h.out("y\nfoo")
	h.requireOpen(a, "y\nfoo")
	h.out(testPrompt)
	a.requireAnswer("")
}
