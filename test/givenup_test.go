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

	"golang.org/x/sys/unix"
)

// TestGivenUpReaderTold: an ask, and a send, whose process stops reading
// (stopped with SIGSTOP while its answer comes) lose their turn or request
// after -stop-timeout, as the contract has it; once the process reads
// again it says that the agent gave it up, with 125, not that it timed
// out or that the agent went away. The agent serves the next one.
func TestGivenUpReaderTold(t *testing.T) {
	t.Parallel()
	requirePython(t)
	for _, kind := range []string{"ask", "send"} {
		t.Run(kind, func(t *testing.T) {
			checkLeaks(t, false)
			gate := filepath.Join(t.TempDir(), "gate")
			if err := unix.Mkfifo(gate, 0o600); err != nil {
				t.Fatal(err)
			}
			// The child writes 5 MB once the gate opens: more than the
			// reply FIFO holds, in one frame.
			big := fmt.Sprintf("open(%q).read(); import sys; sys.stdout.write('y' * 5000000)", gate)
			var a *agent
			var args []string
			if kind == "ask" {
				a = startPython(t, "-stop-timeout", "1s")
				a.ask("pass").requireAnswer(t, "") // ready: busy below means the big turn
				args = []string{"ask", "-dir", a.dir, "-wait", "10s", "-timeout", "30s", big}
			} else {
				a = startAgent(t, agentConfig{flags: []string{"-mode", "exec", "-stop-timeout", "1s"},
					program: []string{"python3", "-c", "import sys; exec(sys.stdin.read())"}})
				args = []string{"send", "-dir", a.dir, "-wait", "10s", "-timeout", "30s", big}
			}
			cmd := exec.Command(agentBin, args...)
			cmd.Env = agentEnv(t)
			cmd.SysProcAttr = dieWithTest()
			var stderr strings.Builder
			cmd.Stderr = &stderr
			devNull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer devNull.Close()
			cmd.Stdout = devNull
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Stop it once its line is the child's (the turn or request
			// runs, the child waits at the gate) and before the answer
			// comes; then let the child write.
			if kind == "ask" {
				a.waitTurn("the big turn", func(s turnStatus) bool { return s.Child.Turn.State == "busy" && s.Child.Turn.Queued == 0 })
			} else {
				a.waitStatus("the big request", func(s status) bool { return s.Requests.Active == 1 })
			}
			if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			if !eventually(hangTimeout, func() bool { return procState(cmd.Process.Pid) == "T" }) {
				t.Fatalf("%s never stopped", kind)
			}
			w, err := os.OpenFile(gate, os.O_WRONLY, 0) // waits for the child
			if err != nil {
				t.Fatal(err)
			}
			w.Close()
			if !eventually(hangTimeout, func() bool { return strings.Contains(a.stderr(), "giving up on a") }) {
				t.Fatalf("the agent never gave the stopped %s up; log:\n%s", kind, a.stderr())
			}
			cmd.Process.Signal(syscall.SIGCONT)
			cmd.Wait()
			if code := exitCode(cmd.ProcessState); code != 125 || !strings.Contains(stderr.String(), "the agent gave this request up") ||
				strings.Count(stderr.String(), "\n") != 1 {
				t.Fatalf("%s, given up, exited %d with %q; want 125 and one line saying the agent gave it up", kind, code, stderr.String())
			}
			if kind == "ask" {
				a.ask("print(6*7)").requireAnswer(t, "42\n")
			} else if res := runSend(t, a.dir, nil, "print(6*7)"); res.code != 0 || string(res.stdout) != "42\n" {
				t.Fatalf("the send after exited %d printing %q", res.code, res.stdout)
			}
			a.stop()
			requireNoReplies(t, a.dir)
		})
	}
}

// procState is the state letter of pid in /proc/PID/stat, "" when gone.
func procState(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return ""
}
