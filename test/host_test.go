//go:build linux

package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The host side of an agent: liveness from another PID namespace, send to
// a stream agent, -idle-timeout, -exit-map and -tee.

// TestHostLiveness: health and send tell from the lock, at once, that an
// agent in another PID namespace is gone: the pid in its status file (1)
// always exists here.
func TestHostLiveness(t *testing.T) {
	t.Parallel()
	requirePrivileged(t, "a PID namespace needs root and unshare(1)")
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{
		wrap:    []string{"unshare", "--pid", "--fork", "--kill-child"},
		flags:   []string{"-mode", "exec"},
		program: []string{busybox, "cat"},
	})
	openWriter(t, a.in).close()
	st := a.waitStatus("running", func(st status) bool { return st.State == "running" })
	if st.PID != 1 {
		t.Fatalf("agent's status names pid %d, want 1 (PID 1 of its namespace)", st.PID)
	}
	requireHealth(t, 0, nil, "-dir", a.dir)

	killed := time.Now()
	a.signal(syscall.SIGKILL)
	a.wait(hangTimeout)
	code, stderr := health(t, nil, "-dir", a.dir)
	took := time.Since(killed)
	if code != 1 || !strings.Contains(stderr, "gone") {
		t.Fatalf("health after SIGKILL of the agent exited %d (%s after the kill), want 1 saying the agent is gone; stderr:\n%s", code, took, stderr)
	}
	t.Logf("health said gone %s after the kill", took)

	// Without -wait send fails at once; with it, once the wait is over.
	for _, args := range [][]string{{"hello"}, {"-wait", "300ms", "hello"}} {
		res := runSend(t, a.dir, nil, args...)
		res.requireCode(t, 125)
		requireOneLine(t, "send", res.stderr)
		if res.took > busySlack {
			t.Fatalf("send %q took %s to see that no agent serves", args, res.took)
		}
	}
	requireNoReplies(t, a.dir)
}

// TestHostSendStream: send to a stream-mode agent exits 125 at once (not
// at the end of its -wait) and the child gets no byte, also with -wait.
func TestHostSendStream(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{program: []string{busybox, "cat"}})
	w := openWriter(t, a.in)
	r := openReader(t, a.out)
	a.waitStatus("running", func(st status) bool { return st.State == "running" })
	for _, args := range [][]string{{"hello"}, {"-wait", "60s", "hello"}} {
		res := runSend(t, a.dir, nil, args...)
		res.requireCode(t, 125)
		requireOneLine(t, "send", res.stderr)
		if !strings.Contains(res.stderr, "stream mode") {
			t.Fatalf("send's error does not say stream mode: %q", res.stderr)
		}
		if res.took > busySlack {
			t.Fatalf("send %q took %s to refuse a stream agent, want it at once", args, res.took)
		}
	}
	// The first line the child echoes is the test's own: send wrote nothing.
	w.writeLine("after")
	r.expectLine("after")
	requireNoReplies(t, a.dir)
}

// TestIdleExec: with -idle-timeout, an exec agent waits for its running and
// queued requests, then stops as on TERM and exits 0.
func TestIdleExec(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a, w, r := startExec(t, agentConfig{
		flags:   []string{"-idle-timeout", "1s", "-max-concurrent", "1"},
		program: sh(t, `read d; sleep "$d"; echo "slept $d"`),
	})
	// Each request runs 1.5 s, longer than the idle timeout; the second
	// waits in the queue while the first runs.
	w.writeLine(jsonLine(t, map[string]any{"id": "a", "stdin": "1.5\n"}))
	w.writeLine(jsonLine(t, map[string]any{"id": "b", "stdin": "1.5\n"}))
	all := responses(t, r, "a", "b")
	all["a"].requireExit(t, 0, "slept 1.5\n")
	all["b"].requireExit(t, 0, "slept 1.5\n") // neither was stopped: an idle stop would be 143
	if code := a.wait(hangTimeout); code != 0 {
		t.Fatalf("idle exec agent exited %d, want 0", code)
	}
	if !strings.Contains(a.stderr(), "idle") {
		t.Fatalf("the agent did not log why it stopped:\n%s", a.stderr())
	}
}

// TestIdleStream: with -idle-timeout, input bytes keep a stream agent; with
// none for the timeout it stops as on TERM, and exits with the child's
// status (cat killed by TERM: 143).
func TestIdleStream(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{flags: []string{"-idle-timeout", "2s"}, program: []string{busybox, "cat"}})
	w := openWriter(t, a.in)
	r := openReader(t, a.out)
	began := time.Now()
	// Input for twice the idle timeout, a line every 200 ms (pacing the
	// input, not waiting for the agent), so that a busy machine may hold
	// a line up for over a second and still not let the agent idle.
	for i := 0; time.Since(began) < 4*time.Second; i++ {
		roundTrip(t, a.in, r, fmt.Sprintf("line %d", i)) // fails once the agent stopped
		time.Sleep(200 * time.Millisecond)
	}
	// A writer that stays but writes nothing is no input.
	if code := a.wait(hangTimeout); code != 143 {
		t.Fatalf("idle stream agent exited %d, want 143 (cat stopped by TERM)", code)
	}
	w.close()
}

// TestExitMap: -exit-map rewrites the agent's exit code last, for every
// row of the table but the agent's own failure.
func TestExitMap(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	t.Run("143=0 after a TERM stop", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{flags: []string{"-exit-map", "143=0"}, program: []string{busybox, "cat"}})
		a.waitChild()
		if code := a.stop(); code != 0 {
			t.Fatalf("agent exited %d, want 0 (143 mapped)", code)
		}
	})
	t.Run("several pairs", func(t *testing.T) {
		checkLeaks(t, false)
		for _, tc := range []struct {
			exit, want int
		}{{3, 30}, {4, 4}, {0, 9}} {
			a := startAgent(t, agentConfig{
				flags:   []string{"-restart", "never", "-exit-map", "3=30, 0=9,143=0"},
				program: sh(t, fmt.Sprintf("exit %d", tc.exit)),
			})
			if code := a.wait(hangTimeout); code != tc.want {
				t.Fatalf("child exited %d: agent exited %d, want %d", tc.exit, code, tc.want)
			}
		}
		// From the environment, like every run flag.
		a := startAgent(t, agentConfig{env: []string{"FIFOBRIDGE_EXIT_MAP=143=5"}, program: []string{busybox, "cat"}})
		a.waitChild()
		if code := a.stop(); code != 5 {
			t.Fatalf("agent exited %d, want 5 (FIFOBRIDGE_EXIT_MAP=143=5)", code)
		}
	})
	t.Run("program not found", func(t *testing.T) {
		checkLeaks(t, false)
		code, stderr := runAgent(t, nil, "run", "-dir", filepath.Join(t.TempDir(), "fb"), "-exit-map", "127=0", "--", "/no/such/program")
		if code != 0 {
			t.Fatalf("agent exited %d, want 0 (127 mapped); stderr:\n%s", code, stderr)
		}
	})
	t.Run("bad map is 125", func(t *testing.T) {
		checkLeaks(t, false)
		for _, m := range []string{"143", "143=", "x=0", "256=0", "0=-1", "1=2,,3=4", "1=2,1=3"} {
			code, stderr := runAgent(t, nil, "run", "-dir", filepath.Join(t.TempDir(), "fb"), "-exit-map", m, "--", busybox, "true")
			if code != 125 {
				t.Fatalf("-exit-map %q: exited %d, want 125; stderr:\n%s", m, code, stderr)
			}
			requireOneLine(t, "run", stderr)
			if !strings.Contains(stderr, "exit-map") {
				t.Fatalf("-exit-map %q: the error does not name the flag: %q", m, stderr)
			}
		}
	})
	t.Run("the agent's own failure is not mapped", func(t *testing.T) {
		checkLeaks(t, false)
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "in"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		code, stderr := runAgent(t, nil, "run", "-dir", dir, "-exit-map", "125=0", "--", busybox, "true")
		if code != 125 {
			t.Fatalf("agent with a regular file for its FIFO exited %d, want 125 even with 125=0; stderr:\n%s", code, stderr)
		}
	})
}

// startTeeAgent is startAgent with the agent's stdout on stdout (the
// harness's own stdout log must stay empty).
func startTeeAgent(t *testing.T, stdout *os.File, flags []string, program ...string) *agent {
	t.Helper()
	a := &agent{t: t, dir: filepath.Join(t.TempDir(), "fb"), logDir: t.TempDir(), done: make(chan struct{})}
	a.in, a.out, a.status = filepath.Join(a.dir, "in"), filepath.Join(a.dir, "out"), filepath.Join(a.dir, "status.json")
	args := append(append([]string{"run", "-dir", a.dir, "-tee"}, flags...), "--")
	a.cmd = exec.Command(agentBin, append(args, program...)...)
	a.cmd.SysProcAttr = dieWithTest()
	a.cmd.Env = agentEnv(t)
	stderr := a.logFile("stderr")
	a.cmd.Stdout, a.cmd.Stderr = stdout, stderr
	err := a.cmd.Start()
	stderr.Close()
	if err != nil {
		t.Fatalf("start agent: %v", err)
	}
	a.pid = a.cmd.Process.Pid
	go func() {
		a.cmd.Wait()
		a.code = exitCode(a.cmd.ProcessState)
		close(a.done)
	}()
	t.Cleanup(a.cleanup)
	return a
}

// teeStatus is the -tee part of the status file.
type teeStatus struct {
	Tee *struct {
		Written uint64 `json:"written"`
		Dropped uint64 `json:"dropped"`
	} `json:"tee"`
}

func (a *agent) readTee() teeStatus {
	a.t.Helper()
	var st teeStatus
	b, err := os.ReadFile(a.status)
	if err == nil {
		err = json.Unmarshal(b, &st)
	}
	if err != nil || st.Tee == nil {
		a.t.Fatalf("status file without tee counts: %v: %s", err, b)
	}
	return st
}

// TestTee: with -tee the child's output reaches the output FIFO and, as a
// copy, the agent's stdout; a stdout nobody reads never holds the FIFO
// back: the copy drops bytes and counts them.
func TestTee(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	t.Run("copy on stdout", func(t *testing.T) {
		checkLeaks(t, false)
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		a := startTeeAgent(t, pw, nil, busybox, "cat")
		pw.Close()
		a.waitChild()
		r := openReader(t, a.out)
		roundTrip(t, a.in, r, "to both")
		got := make([]byte, len("to both\n"))
		pr.SetReadDeadline(time.Now().Add(hangTimeout))
		if _, err := io.ReadFull(pr, got); err != nil || string(got) != "to both\n" {
			t.Fatalf("stdout got %q, %v; want the child's line", got, err)
		}
		if code := a.stop(); code != 143 {
			t.Fatalf("agent exited %d, want 143", code)
		}
		if st := a.readTee(); st.Tee.Written != 8 || st.Tee.Dropped != 0 {
			t.Fatalf("tee counts %+v, want 8 written, none dropped", *st.Tee)
		}
	})
	t.Run("stdout not read", func(t *testing.T) {
		checkLeaks(t, false)
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close() // held open, never read: stdout fills and stays full
		const lines = 1000000
		a := startTeeAgent(t, pw, []string{"-restart", "never"}, sh(t, fmt.Sprintf("read go; exec seq 1 %d", lines))...)
		pw.Close()
		var want bytes.Buffer
		for i := 1; i <= lines; i++ {
			fmt.Fprintf(&want, "%d\n", i)
		}
		a.waitChild()
		r := openReader(t, a.out)
		openWriter(t, a.in).writeLine("go")
		got := r.readN(want.Len())
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("the output FIFO got %d bytes that differ from the child's %d", len(got), want.Len())
		}
		if code := a.wait(hangTimeout); code != 0 {
			t.Fatalf("agent exited %d, want 0", code)
		}
		st := a.readTee()
		if st.Tee.Dropped == 0 || st.Tee.Written+st.Tee.Dropped != uint64(want.Len()) {
			t.Fatalf("tee counts %+v: want some dropped, and written+dropped = %d", *st.Tee, want.Len())
		}
	})
	t.Run("stdout's reader gone", func(t *testing.T) {
		checkLeaks(t, false)
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		pr.Close() // a write to stdout gets EPIPE: the agent goes on
		a := startTeeAgent(t, pw, []string{"-restart", "never"}, sh(t, "read go; exec seq 1 100000")...)
		pw.Close()
		var want bytes.Buffer
		for i := 1; i <= 100000; i++ {
			fmt.Fprintf(&want, "%d\n", i)
		}
		a.waitChild()
		r := openReader(t, a.out)
		openWriter(t, a.in).writeLine("go")
		if got := r.readN(want.Len()); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("the output FIFO got %d bytes that differ from the child's %d", len(got), want.Len())
		}
		if code := a.wait(hangTimeout); code != 0 {
			t.Fatalf("agent exited %d, want 0", code)
		}
		if st := a.readTee(); st.Tee.Written != 0 || st.Tee.Dropped != uint64(want.Len()) {
			t.Fatalf("tee counts %+v, want all %d dropped", *st.Tee, want.Len())
		}
	})
	t.Run("exec mode refuses -tee", func(t *testing.T) {
		checkLeaks(t, false)
		code, stderr := runAgent(t, nil, "run", "-dir", filepath.Join(t.TempDir(), "fb"), "-mode", "exec", "-tee", "--", busybox, "cat")
		if code != 125 {
			t.Fatalf("exec mode with -tee exited %d, want 125; stderr:\n%s", code, stderr)
		}
		requireOneLine(t, "run", stderr)
	})
}
