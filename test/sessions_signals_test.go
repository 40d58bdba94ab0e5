//go:build linux

package test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// Signals the agent forwards reach every session, on a terminal and on
// pipes: USR1 to the agent runs each session's trap.
func TestSessionsForwardedSignals(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	marks := t.TempDir()
	script := `trap 'echo caught > "$1"' USR1; printf '> '; while :; do sleep 1; done`
	a := startSessions(t, []string{"-allow-args", "-prompt", `^> $`}, []string{"/bin/sh", "-c", script, "sh"})
	names := []string{"t1", "p1", "t2"}
	for i, name := range names {
		a.mustOpen(name, map[string]any{"tty": i%2 == 0, "args": []string{filepath.Join(marks, name)}})
	}
	a.signal(syscall.SIGUSR1)
	for _, name := range names {
		mark := filepath.Join(marks, name)
		if !eventually(hangTimeout, func() bool { _, err := os.Stat(mark); return err == nil }) {
			t.Errorf("session %s never saw the USR1 sent to the agent", name)
		}
	}
	start := time.Now()
	if code := a.stop(); code != 0 {
		t.Errorf("agent exit code %d, want 0", code)
	}
	t.Logf("stop took %v", time.Since(start))
}
