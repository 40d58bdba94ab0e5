//go:build linux

package test

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// interactiveStopBound is how soon after TERM an agent whose child acts
// on its stop signal must have exited: half the -stop-timeout these tests
// give (30 s), so that only the stop signal, not SIGKILL, can have ended
// the child, as its exit code shows too.
const interactiveStopBound = 15 * time.Second

// TestStopSignalConversation: with -prompt the stop signal is HUP, as
// with -tty: a shell on pipes ignores TERM, and would take -stop-timeout
// and SIGKILL to stop. -stop-signal still wins.
func TestStopSignalConversation(t *testing.T) {
	t.Parallel()
	t.Run("bash on pipes ends on HUP", func(t *testing.T) {
		checkLeaks(t, false)
		bash, err := exec.LookPath("bash")
		if err != nil {
			t.Fatalf("bash is needed (CI installs it): %v", err)
		}
		a := startAgent(t, agentConfig{
			flags:   []string{"-prompt", `^\$ $`, "-stderr", "out", "-stop-timeout", "30s"},
			program: []string{"/usr/bin/env", "PS1=$ ", bash, "--norc", "--noprofile", "-i"},
		})
		if res := a.ask("echo $((6*7))"); res.code != 0 || !strings.Contains(res.stdout, "42\n") {
			t.Fatalf("ask exited %d with %q, want 0 with 42; stderr:\n%s", res.code, res.stdout, res.stderr)
		}
		a.signal(syscall.SIGTERM)
		if code := a.wait(interactiveStopBound); code != 128+int(syscall.SIGHUP) {
			t.Fatalf("agent exited %d, want 129: the shell ended by its HUP", code)
		}
		requireIgnoreWarnings(t, a, 0)
	})
	t.Run("-stop-signal still wins", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{
			flags:   []string{"-prompt", `^\$ $`, "-stop-signal", "TERM", "-stop-timeout", "30s"},
			program: sh(t, `trap '' HUP; trap 'exit 6' TERM; echo ready; while :; do sleep 0.05; done`),
		})
		openReader(t, a.out).expectLine("ready")
		a.signal(syscall.SIGTERM)
		if code := a.wait(interactiveStopBound); code != 6 {
			t.Fatalf("agent exited %d, want the child's 6 from its TERM", code)
		}
	})
}

// TestStopWarnsIgnored: a child still there 2 s after its stop signal,
// with a longer -stop-timeout, gets one warning in the log naming the
// signal and -stop-signal, whether a stream child, an exec request
// stopped by the agent or one at its time limit; a child that acts on
// its signal gets none.
func TestStopWarnsIgnored(t *testing.T) {
	t.Parallel()
	flags := []string{"-stop-timeout", "4s"}
	t.Run("stream child ignores TERM", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{program: helperProgram(), helper: "ignoreterm", flags: flags})
		openReader(t, a.out).expectLine("ready")
		if code := a.stop(); code != 137 {
			t.Fatalf("agent exited %d, want 137: SIGKILL at -stop-timeout", code)
		}
		requireIgnoreWarnings(t, a, 1)
	})
	t.Run("stream child acts on TERM", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{program: helperProgram(), helper: "sleep", flags: flags})
		openReader(t, a.out).expectLine("ready")
		if code := a.stop(); code != 143 {
			t.Fatalf("agent exited %d, want 143: TERM ended the child", code)
		}
		requireIgnoreWarnings(t, a, 0)
	})
	ignoring := binSh(`trap "" TERM; echo ready; exec sleep 60`)
	t.Run("exec request stopped with the agent", func(t *testing.T) {
		checkLeaks(t, false)
		a, w, r := startExec(t, agentConfig{program: ignoring, flags: flags})
		w.write([]byte(`{"id":"r"}` + "\n"))
		all := map[string]*response{}
		stopped := false
		for resp := addFrame(t, all, readFrame(t, r)); !resp.done(); resp = addFrame(t, all, readFrame(t, r)) {
			if !stopped && string(resp.stdout) == "ready\n" {
				a.signal(syscall.SIGTERM) // the child runs and ignores TERM
				stopped = true
			}
		}
		if resp := all["r"]; resp.exit == nil || resp.exit.Signal != "KILL" {
			t.Fatalf("want an exit frame saying KILL:%s", resp)
		}
		w.close()
		if code := a.wait(hangTimeout); code != 0 {
			t.Fatalf("agent exited %d, want 0", code)
		}
		requireIgnoreWarnings(t, a, 1)
	})
	t.Run("exec request at its time limit", func(t *testing.T) {
		checkLeaks(t, false)
		a := startAgent(t, agentConfig{program: ignoring, flags: append([]string{"-mode", "exec"}, flags...)})
		waitServing(t, a)
		runSend(t, a.dir, nil, "-timeout", "300ms", "x").requireCode(t, 124)
		a.waitLog("ignores its stop signal") // the stop goes on after the exit frame
		a.stop()
		requireIgnoreWarnings(t, a, 1)
	})
}

// requireIgnoreWarnings requires want warnings in a's log that a child
// ignores its stop signal, each naming the signal and -stop-signal.
func requireIgnoreWarnings(t *testing.T, a *agent, want int) {
	t.Helper()
	var got []string
	for _, line := range strings.Split(a.stderr(), "\n") {
		if strings.Contains(line, "ignores its stop signal") {
			got = append(got, line)
		}
	}
	if len(got) != want {
		t.Fatalf("%d warnings that the child ignores its stop signal, want %d:\n%s", len(got), want, strings.Join(got, "\n"))
	}
	for _, line := range got {
		for _, part := range []string{"level=WARN", "signal=TERM", "-stop-signal"} {
			if !strings.Contains(line, part) {
				t.Errorf("the warning does not say %s: %s", part, line)
			}
		}
	}
}
