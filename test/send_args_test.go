//go:build linux

package test

import (
	"strings"
	"testing"
)

// TestSendArgs (issue 18): each send -arg A is appended to the request's
// args, in order, so arguments need no hand-written JSON line; TEXT stays
// the child's stdin. An agent without -allow-args refuses the request:
// 125, one clear line.
func TestSendArgs(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{flags: []string{"-mode", "exec", "-allow-args"}, program: []string{busybox, "echo"}})
	waitServing(t, a)
	res := runSend(t, a.dir, nil, "-arg", "a", "-arg", "b c")
	res.requireCode(t, 0)
	if string(res.stdout) != "a b c\n" {
		t.Fatalf("send -arg a -arg 'b c' to echo printed %q, want %q", res.stdout, "a b c\n")
	}
	res = runSend(t, a.dir, nil, "-arg", "-n", "-arg", `"x" é`, "not an argument")
	res.requireCode(t, 0)
	if string(res.stdout) != `"x" é` {
		t.Fatalf("send -arg -n -arg '\"x\" é' TEXT to echo printed %q, want %q", res.stdout, `"x" é`)
	}
	requireNoReplies(t, a.dir)

	b := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: []string{busybox, "echo"}})
	waitServing(t, b)
	res = runSend(t, b.dir, nil, "-arg", "a")
	res.requireCode(t, 125)
	requireOneLine(t, "send", res.stderr)
	if !strings.Contains(res.stderr, "-allow-args") {
		t.Fatalf("send's error does not name -allow-args: %q", res.stderr)
	}
	requireNoReplies(t, b.dir)
}
