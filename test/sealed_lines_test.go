//go:build linux

package test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// distinct is n bytes of tag and a running count ("a00000a00001..."): a
// piece lost, doubled or moved changes it.
func distinct(tag string, n int) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "%s%05d", tag, i)
	}
	return b.String()[:n]
}

// sha256sum is what `sha256sum` prints for s on its stdin.
func sha256sum(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:]) + "  -\n"
}

// Issue 32, item 1: a sealed line is answered as the same line unsealed,
// whichever kind it is. The seal ({"size":N,"sha256":...} first, written
// for every line over 4094 bytes) is framing: its "size" is not an open's
// terminal size, and a line's own "size" is not a second of the seal's.
// Before, every sealed control line was refused: an open with a few KB of
// -env and -arg exited 125, and so did a sealed list.
func TestSealedLines(t *testing.T) {
	t.Parallel()
	t.Run("sessions", func(t *testing.T) {
		checkLeaks(t, false)
		a := startSessionsAgent(t, []string{"-allow-args", "-stderr", "out"}, []string{"/bin/sh"})
		arg, env := distinct("a", 10_000), distinct("e", 6_000)
		// A sealed open (about 16 KB) with a terminal size of its own:
		// sh -i -s ARG reads commands from its terminal, ARG is its $1.
		a.host("open", "-tty", "-size", "100x30", "-prompt", hostShPrompt,
			"-arg", "-i", "-arg", "-s", "-arg", arg, "-env", "BIG="+env, "big").requireCode(t, "open with 16 KB", 0, "")
		if got := a.mustAsk("big", `echo ${#1} ${#BIG}`); got != "10000 6000\n" {
			t.Errorf("lengths of $1 and $BIG: %q, want 10000 6000", got)
		}
		if got := a.mustAsk("big", `printf %s "$1" | sha256sum`); got != sha256sum(arg) {
			t.Errorf("$1 is not the 10 KB -arg: sha256sum %q", got)
		}
		if got := a.mustAsk("big", `printf %s "$BIG" | sha256sum`); got != sha256sum(env) {
			t.Errorf("$BIG is not the 6 KB -env value: sha256sum %q", got)
		}
		if got := a.mustAsk("big", "stty size"); got != "30 100\n" {
			t.Errorf("stty size: %q, want the open's 100x30 (rows 30, columns 100)", got)
		}

		// A short list, sealed by hand as docs/exec.md has it.
		reply, r, done := a.wireReply()
		a.writeSealed(a.in, map[string]any{"id": "l1", "reply": reply, "op": "list"})
		f := a.readWireFrame(r)
		done()
		if f.typ() != "sessions" || f["id"] != "l1" || !slices.Equal(listed(f), []string{"big"}) {
			t.Errorf("sealed list: %v", f)
		}

		// Asks: one of 6 KB sealed by ask, and a short one sealed by hand
		// with a key "size" of its own, which an ask ignores as it
		// ignores any key it does not know, sealed or not.
		a.host("open", "-prompt", hostShPrompt, "-arg", "-i", "pipes").requireCode(t, "open pipes", 0, "")
		long := distinct("k", 6_000)
		a.host("ask", "-session", "pipes", "echo "+long).requireAnswer(t, long+"\n")
		reply, r, done = a.wireReply()
		a.writeSealed(a.sessionFile("pipes", "ask"), map[string]any{"id": "a2", "reply": reply,
			"input": "echo sealed by hand", "timeout": "20s", "size": "80x24"})
		text, end := a.readAnswer(r)
		done()
		if end.typ() != "end" || end["id"] != "a2" || text != "sealed by hand\n" {
			t.Errorf("ask sealed by hand: %q, %v", text, end)
		}

		a.host("close", "big", "pipes").requireCode(t, "close", 0, "")
		if left := a.sessionNames(); len(left) > 0 {
			t.Errorf("left in DIR/sessions: %v", left)
		}
		if code := a.stop(); code != 0 {
			t.Errorf("agent exit code %d, want 0", code)
		}
	})

	t.Run("exec", func(t *testing.T) {
		checkLeaks(t, false)
		a, w, r := startExec(t, agentConfig{program: []string{"cat"}})
		// A request of 10 KB sealed by send, one sealed by the test, and
		// a short one sealed by hand with a key "size" of its own.
		long := distinct("r", 10_000)
		if res := a.host("send", long); res.code != 0 || res.stdout != long+"\n" {
			t.Errorf("send of 10 KB: exit %d, %d bytes out, stderr %q", res.code, len(res.stdout), res.stderr)
		}
		w.writeLine(jsonLine(t, map[string]any{"id": "long", "stdin": long}))
		w.write(sealLine(a.marshal(map[string]any{"id": "own", "stdin": "sealed by hand\n", "size": "80x24"})))
		got := responses(t, r, "long", "own")
		got["long"].requireExit(t, 0, long)
		got["own"].requireExit(t, 0, "sealed by hand\n")
		if code := a.stop(); code != 0 {
			t.Errorf("agent exit code %d, want 0", code)
		}
	})
}
