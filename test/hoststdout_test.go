//go:build linux

package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestHostStdoutBlocked: `ask ... | (sleep 60)` and `send ... | (sleep 60)`,
// an answer far larger than the pipe, so that the command blocks writing
// its stdout: INT, TERM and its own -timeout still end it (130, 143, 124),
// also when its stderr is that pipe too; it removes its reply FIFO, and the
// next ask or send is answered.
func TestHostStdoutBlocked(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	const big = 1 << 20 // 16 times a pipe's default capacity
	cases := []struct {
		name   string
		how    string // "INT", "TERM" or "timeout"
		stderr bool   // stderr is the blocked pipe too
		want   int
	}{
		{"INT", "INT", false, 130},
		{"TERM", "TERM", false, 143},
		{"timeout", "timeout", false, 124},
		{"INT stderr too", "INT", true, 130},
	}
	t.Run("ask", func(t *testing.T) {
		a := startPython(t)
		a.ask("print(1)").requireAnswer(t, "1\n")
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				code := runBlocked(t, a, nil, c.how, c.stderr, "ask", fmt.Sprintf("print('x' * %d)", big))
				if code != c.want {
					t.Fatalf("ask exited %d, want %d", code, c.want)
				}
				requireNoReplies(t, a.dir)
				a.ask("print(6*7)").requireAnswer(t, "42\n")
			})
		}
		a.stop()
	})
	t.Run("send", func(t *testing.T) {
		a := startAgent(t, agentConfig{flags: []string{"-mode", "exec", "-allow-args", "-stop-timeout", "1s"},
			program: binSh(fmt.Sprintf(`if [ "$1" = big ]; then head -c %d /dev/zero; else cat; fi`, big))})
		waitServing(t, a)
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				code := runBlocked(t, a, nil, c.how, c.stderr, "send", "-arg", "big")
				if code != c.want {
					t.Fatalf("send exited %d, want %d", code, c.want)
				}
				requireNoReplies(t, a.dir)
				res := runSend(t, a.dir, nil, "next")
				res.requireCode(t, 0)
				if string(res.stdout) != "next\n" {
					t.Fatalf("the send after it got %q", res.stdout)
				}
			})
		}
		a.stop()
	})
}

// runBlocked runs "fifobridge NAME -dir DIR ARGS..." as cred (nil: as
// this process) with its stdout (and its stderr, with stderr) a pipe that
// nobody reads, waits until it is
// blocked writing to that pipe, ends it as how says (a signal, or its own
// -timeout 2s) and returns its exit code. The pipe is read by nobody until
// it has exited: a command that waits for its reader fails the test.
func runBlocked(t *testing.T, a *agent, cred *syscall.Credential, how string, stderr bool, name string, args ...string) int {
	t.Helper()
	if how == "timeout" {
		args = append([]string{"-timeout", "2s"}, args...)
	}
	cmd := exec.Command(agentBin, append([]string{name, "-dir", a.dir}, args...)...)
	cmd.Env = agentEnv(t)
	cmd.SysProcAttr = dieWithTest()
	cmd.SysProcAttr.Credential = cred
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var errOut strings.Builder
	cmd.Stdout, cmd.Stderr = w, &errOut
	if stderr {
		cmd.Stderr = w
	}
	started := time.Now()
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	defer func() {
		select {
		case <-done:
		default:
			cmd.Process.Kill()
			<-done
		}
	}()

	waitPipeWrite(t, cmd.Process.Pid, done)
	begin := time.Now()
	switch how {
	case "INT":
		cmd.Process.Signal(syscall.SIGINT)
	case "TERM":
		cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-done:
	case <-time.After(hangTimeout):
		t.Fatalf("fifobridge %s, blocked on its stdout, did not exit on %s within %v", name, how, hangTimeout)
	}
	t.Logf("fifobridge %s exited %v after it was blocked and %s came", name, time.Since(begin).Round(time.Millisecond), how)
	// Its own -timeout is the command's limit, not the agent's frame's:
	// it ends then, not when a frame it cannot take would have come.
	// (How close to its -timeout it ends is for a quiet machine: here
	// busySlack on top.)
	if life := time.Since(started); how == "timeout" && life > 2*time.Second+busySlack {
		t.Errorf("fifobridge %s -timeout 2s, blocked on its stdout, lived %v", name, life.Round(time.Millisecond))
	}
	if !stderr {
		if s := strings.TrimSpace(errOut.String()); !strings.Contains(s, "interrupted by SIG"+how) && !strings.Contains(s, "timed out") {
			t.Errorf("fifobridge %s said on stderr %q, want why it ended", name, s)
		}
	}
	return exitCode(cmd.ProcessState)
}

// waitPipeWrite waits until a thread of process pid waits in a write to a
// full pipe, or done is closed (the process exited: that fails t).
func waitPipeWrite(t *testing.T, pid int, done <-chan struct{}) {
	t.Helper()
	blocked := func() bool {
		tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
		for _, p := range tasks {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), "pipe_write") {
				return true
			}
		}
		return false
	}
	deadline := time.Now().Add(hangTimeout)
	for !blocked() {
		select {
		case <-done:
			t.Fatalf("pid %d exited before it blocked on its stdout", pid)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("pid %d never blocked writing to its stdout", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
