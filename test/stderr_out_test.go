//go:build linux

package test

import (
	"strings"
	"testing"
)

// TestStderrOut: with -stderr out a plain stream child's stderr is the same
// pipe as its stdout, so its errors reach the output FIFO in its own order
// and not the agent's log; the default keeps them in the log.
func TestStderrOut(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	script := `echo one; echo two >&2; echo three`
	t.Run("out", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{flags: []string{"-restart", "never", "-stderr", "out"}, program: sh(t, script)})
		r := openReader(t, a.out)
		for _, want := range []string{"one", "two", "three"} {
			r.expectLine(want)
		}
		if code := a.wait(hangTimeout); code != 0 {
			t.Fatalf("agent exited %d, want 0", code)
		}
		if strings.Contains(a.stderr(), "two") {
			t.Fatalf("the child's stderr reached the agent's log:\n%s", a.stderr())
		}
	})
	t.Run("log", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{flags: []string{"-restart", "never"}, program: sh(t, script)})
		r := openReader(t, a.out)
		r.expectLine("one")
		r.expectLine("three")
		if code := a.wait(hangTimeout); code != 0 {
			t.Fatalf("agent exited %d, want 0", code)
		}
		if !strings.Contains(a.stderr(), "two\n") {
			t.Fatalf("the child's stderr is not in the agent's log:\n%s", a.stderr())
		}
	})
	t.Run("exec mode refuses it", func(t *testing.T) {
		code, stderr := runAgent(t, nil, "run", "-dir", t.TempDir()+"/fb", "-mode", "exec", "-stderr", "out", "--", "true")
		if code != 125 || !strings.Contains(stderr, "-stderr") {
			t.Fatalf("run -mode exec -stderr out exited %d (%s), want 125 naming -stderr", code, stderr)
		}
	})
}
