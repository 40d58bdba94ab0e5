//go:build linux

package test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestHarnessWrappedAgent: the harness knows the pid of an agent it starts
// under a wrapper, also when the agent is gone before the harness could
// look for it, and when the wrapper has other children.
func TestHarnessWrappedAgent(t *testing.T) {
	t.Parallel()
	t.Run("exits at once as PID 1", func(t *testing.T) {
		requirePrivileged(t, "a PID namespace needs root and unshare(1)")
		checkLeaks(t, false)
		for i := range 20 {
			a := startAgent(t, agentConfig{
				wrap:  []string{"unshare", "-pf", "--mount-proc"},
				flags: []string{"-mode", "bogus"},
			})
			if code := a.wait(hangTimeout); code != 125 {
				t.Fatalf("run %d: agent exited %d, want 125 for its bad flag", i, code)
			}
		}
	})
	t.Run("wrapper with other children", func(t *testing.T) {
		checkLeaks(t, false)
		pidFile := filepath.Join(t.TempDir(), "pid")
		// The shell runs a sleep, then the agent (which exits at once),
		// and outlives both: the harness cannot tell the agent from its
		// children by looking.
		a := startAgent(t, agentConfig{
			wrap: []string{"/bin/sh", "-c",
				`sleep 0.2; "$@" & echo $! > "$0"; wait $!; code=$?; sleep 0.2; exit $code`, pidFile},
			flags: []string{"-mode", "bogus"},
		})
		if code := a.wait(hangTimeout); code != 125 {
			t.Fatalf("wrapper exited %d, want the agent's 125", code)
		}
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := strconv.Atoi(strings.TrimSpace(string(b))); a.pid != want {
			t.Fatalf("harness took pid %d for the agent, the wrapper started it as %d", a.pid, want)
		}
	})
}
