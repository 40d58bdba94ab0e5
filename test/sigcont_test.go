//go:build linux

package test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestStopContinuesStoppedChild: a child stopped by a forwarded TSTP runs
// its TERM handler when the agent is stopped, since the stop signal is
// followed by SIGCONT, and the agent exits with the code the handler set,
// well before -stop-timeout; with its own cgroup and without.
func TestStopContinuesStoppedChild(t *testing.T) {
	t.Parallel()
	for _, flags := range [][]string{nil, {"-cgroup", "off"}} {
		t.Run(strings.Join(append([]string{"default"}, flags...), " "), func(t *testing.T) {
			checkLeaks(t, false)
			mark := filepath.Join(t.TempDir(), "trapped")
			script := `trap 'echo trapped > "$0"; exit 7' TERM; echo ready; sleep 1000 & wait`
			a := startAgent(t, agentConfig{flags: append([]string{"-restart", "never", "-stop-timeout", "30s"}, flags...),
				program: []string{busybox, "sh", "-c", script, mark}})
			r := openReader(t, a.out)
			r.expectLine("ready")
			pid := a.waitChild()
			a.signal(syscall.SIGTSTP)
			if !eventually(hangTimeout, func() bool { st, err := readStat(pid); return err == nil && st.state == 'T' }) {
				st, _ := readStat(pid)
				t.Fatalf("the child was not stopped by the forwarded TSTP: state %q", st.state)
			}
			// Within hangTimeout, well before -stop-timeout: a child left
			// stopped would run no trap, and SIGKILL would end it (137).
			a.signal(syscall.SIGTERM)
			if code := a.wait(hangTimeout); code != 7 {
				t.Fatalf("agent exited with %d, want the trap's 7", code)
			}
			if b, err := os.ReadFile(mark); err != nil || strings.TrimSpace(string(b)) != "trapped" {
				t.Errorf("the child's TERM trap did not run: %q, %v", b, err)
			}
			r.close()
		})
	}
}
