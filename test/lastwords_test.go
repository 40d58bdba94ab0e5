//go:build linux

package test

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLastWords: a stream child that prints and exits for good before
// anyone opened the output FIFO keeps its output: the agent waits for a
// reader (at most -stop-timeout) before it exits and removes the FIFO.
func TestLastWords(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		flags []string
		code  int
	}{
		{"restart never", []string{"-restart", "never"}, 7},
		{"clean exit under on-failure", nil, 0},
		{"create false", []string{"-restart", "never", "-create=false"}, 7},
		{"terminal", []string{"-restart", "never", "-tty"}, 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t, false)
			cfg := agentConfig{flags: append(tc.flags, "-stop-timeout", "30s"),
				program: sh(t, "echo last words; exit "+strconv.Itoa(tc.code))}
			if slicesContains(tc.flags, "-create=false") {
				cfg.dir = t.TempDir()
				for _, name := range []string{"in", "out"} {
					if err := syscall.Mkfifo(cfg.dir+"/"+name, 0o600); err != nil {
						t.Fatal(err)
					}
				}
			}
			a := startAgent(t, cfg)
			waitLastExit(t, a)
			r := openReader(t, a.out)
			if got := strings.TrimRight(r.readLine(), "\r"); got != "last words" {
				t.Fatalf("read %q, want the child's last words", got)
			}
			if code := a.wait(hangTimeout); code != tc.code {
				t.Fatalf("agent exited %d, want %d", code, tc.code)
			}
		})
	}
}

// TestLastWordsGivenUp: with no reader, the last words are given up after
// -stop-timeout, and a TERM ends the wait at once.
func TestLastWordsGivenUp(t *testing.T) {
	t.Parallel()
	t.Run("no reader", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{flags: []string{"-restart", "never", "-stop-timeout", "1s"},
			program: sh(t, "echo nobody reads this; exit 3")})
		if code := a.wait(hangTimeout); code != 3 {
			t.Fatalf("agent exited %d, want 3", code)
		}
		if !strings.Contains(a.stderr(), "last output was not read") {
			t.Fatalf("no warning about the unread output:\n%s", a.stderr())
		}
	})
	t.Run("TERM", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{flags: []string{"-restart", "never", "-stop-timeout", "60s"},
			program: sh(t, "echo nobody reads this; exit 3")})
		waitLastExit(t, a)
		a.signal(syscall.SIGTERM)
		// Far below -stop-timeout: a stop does not wait for a reader.
		if code := a.wait(20 * time.Second); code != 3 {
			t.Fatalf("agent exited %d, want 3", code)
		}
	})
}

// TestLastWordsTee (issue 26): an agent run with -tee does not wait for a
// reader of its output FIFO: the last words are in its log already
// (docker run -e FIFOBRIDGE_TEE=true IMAGE echo hi took -stop-timeout).
// With nobody on out it exits as soon as the child does, far below
// -stop-timeout, with the words on its stdout; with a terminal too.
func TestLastWordsTee(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		flags []string
	}{
		{"pipes", nil},
		{"terminal", []string{"-tty"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			stdout, err := os.CreateTemp(t.TempDir(), "stdout")
			if err != nil {
				t.Fatal(err)
			}
			defer stdout.Close()
			a := startTeeAgent(t, stdout, append([]string{"-restart", "never", "-stop-timeout", "60s"}, tc.flags...),
				sh(t, "echo in the log; exit 3")...)
			// Far below -stop-timeout: nothing waits for a reader.
			if code := a.wait(30 * time.Second); code != 3 {
				t.Fatalf("agent exited %d, want 3", code)
			}
			if b, err := os.ReadFile(stdout.Name()); err != nil || !strings.Contains(string(b), "in the log") {
				t.Fatalf("the child's words are not in the agent's stdout: %q, %v", b, err)
			}
			if strings.Contains(a.stderr(), "last output was not read") {
				t.Fatalf("the agent waited for a reader:\n%s", a.stderr())
			}
		})
	}
}

// waitLastExit waits until the status file shows that the child exited,
// while the agent still runs.
func waitLastExit(t *testing.T, a *agent) {
	t.Helper()
	a.waitStatus("the child's exit", func(st status) bool { return st.Child.LastExit != nil })
}
