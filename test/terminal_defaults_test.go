//go:build linux

package test

import (
	"strings"
	"syscall"
	"testing"
)

// TestTerminalChildDefaults: a terminal child is a person's session: HUP is
// its stop signal (interactive shells ignore TERM), and it gets TERM=dumb
// when the agent has no TERM.
func TestTerminalChildDefaults(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	t.Run("HUP stops it", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{flags: []string{"-tty", "-stop-timeout", "30s"},
			program: sh(t, `trap '' TERM; trap 'echo got HUP; exit 5' HUP; echo ready; while :; do sleep 0.05; done`)})
		r := openReader(t, a.out)
		r.waitTTYLine("ready")
		a.signal(syscall.SIGTERM)
		r.waitTTYLine("got HUP")
		// Far below -stop-timeout: the shell ended on its HUP, not on SIGKILL.
		if code := r.drainUntilExit(a, hangTimeout); code != 5 {
			t.Fatalf("agent exited %d, want the child's 5", code)
		}
	})
	t.Run("-stop-signal still wins", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{flags: []string{"-tty", "-stop-signal", "TERM", "-stop-timeout", "30s"},
			program: sh(t, `trap 'echo got TERM; exit 6' TERM; echo ready; while :; do sleep 0.05; done`)})
		r := openReader(t, a.out)
		r.waitTTYLine("ready")
		a.signal(syscall.SIGTERM)
		r.waitTTYLine("got TERM")
		if code := r.drainUntilExit(a, hangTimeout); code != 6 {
			t.Fatalf("agent exited %d, want the child's 6", code)
		}
	})
	for _, tc := range []struct{ name, env, want string }{
		{"no TERM", "", "dumb"},
		{"empty TERM", "TERM=", "dumb"},
		{"TERM kept", "TERM=vt100", "vt100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t, false)
			cfg := agentConfig{flags: []string{"-tty", "-restart", "never"},
				program: sh(t, `echo "term=[$TERM]"`), unsetEnv: []string{"TERM"}}
			if tc.env != "" {
				cfg.env, cfg.unsetEnv = []string{tc.env}, nil
			}
			a := startAgent(t, cfg)
			r := openReader(t, a.out)
			if got := r.waitTTYLine("term="); !strings.Contains(got, "term=["+tc.want+"]") {
				t.Fatalf("the child saw %q, want TERM=%s", got, tc.want)
			}
			r.drainUntilExit(a, hangTimeout)
		})
	}
}
