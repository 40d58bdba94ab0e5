//go:build linux

package test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestInputAcrossRestart: lines the first child did not read, all of them
// already read by the agent, reach the next child without new input.
func TestInputAcrossRestart(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{
		flags:   []string{"-restart", "on-failure", "-max-restarts", "10", "-backoff-min", "10ms", "-backoff-max", "10ms"},
		program: sh(t, `read line; echo "got:$line"; exit 1`),
	})
	r := openReader(t, a.out)
	w := openWriter(t, a.in)
	w.write([]byte("a\nb\nc\nd\n"))
	for _, want := range []string{"got:a", "got:b", "got:c", "got:d"} {
		r.expectLine(want)
	}
	w.close()
	r.close()
	a.stop()
}

// TestQuietOutputFollowsReplacedFIFO: output waiting in an output FIFO that
// is replaced moves to the new one without the child writing again.
func TestQuietOutputFollowsReplacedFIFO(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{program: sh(t, `echo hello; echo world; exec sleep 100`)})
	waitFIFOHolds(t, a.out, len("hello\nworld\n"))
	tmp := a.out + ".new"
	if err := syscall.Mkfifo(tmp, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, a.out); err != nil {
		t.Fatal(err)
	}
	r := openReader(t, a.out)
	r.expectLine("hello")
	r.expectLine("world")
	r.close()
	a.stop()
}

// TestInheritedProcessesSurvive: a background job of the shell that exec'd
// the agent is not part of the child's tree: it outlives the child's exit
// and the agent.
func TestInheritedProcessesSurvive(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	requireBusybox(t)
	dir := filepath.Join(t.TempDir(), "fb")
	pidFile := filepath.Join(t.TempDir(), "sleeper")
	script := `sleep 300 >/dev/null 2>&1 & echo $! > "$1"; exec "$2" run -dir "$3" -restart never -- "$4" sh -c 'sleep 0.2; exit 4'`
	cmd := exec.Command(busybox, "sh", "-c", script, "sh", pidFile, agentBin, dir, busybox)
	cmd.Env = agentEnv(t)
	out, err := cmd.CombinedOutput()
	if code := exitCode(cmd.ProcessState); code != 4 {
		t.Fatalf("agent exited %d (%v), want the child's 4; output:\n%s", code, err, out)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if !alive(pid) {
		t.Fatalf("the entrypoint's background job %d was killed with the child's tree", pid)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	eventually(hangTimeout, func() bool { return !alive(pid) })
}
