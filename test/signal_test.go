//go:build linux

package test

import (
	"strings"
	"testing"
	"time"
)

// `fifobridge signal INT` ends `sleep 30` run by a shell whose prompt
// carries $?, in stream mode and in a session, on pipes and on a
// terminal: the ask that ran it ends within a second (with busySlack) and
// exits 130 through the prompt's status group, and the next ask is
// clean. The agent holds no more descriptors after than before.
func TestSignalInterruptsAsk(t *testing.T) {
	for _, kind := range childKinds {
		t.Run(kind.name, func(t *testing.T) {
			checkLeaks(t, true)
			c := startChild(t, kind, []string{"-prompt", statusPrompt, "-stderr", "out"}, statusShell)
			c.mustAsk("true")
			fds := c.agentFDs(-1)
			ask, out := c.startAsk("-timeout", "60s", "sleep 30")
			asked := make(chan error, 1)
			go func() { asked <- ask.Wait() }()
			if !eventually(hangTimeout, func() bool { return len(sleepsIn(c.pid)) > 0 }) {
				t.Fatalf("sleep 30 never ran; ask said %q", out.String())
			}
			sent := time.Now()
			c.verb("signal", "INT").requireCode(t, "signal INT", 0, "")
			select {
			case <-asked:
			case <-time.After(time.Second + busySlack):
				t.Fatalf("the ask of sleep 30 did not end within %v of signal INT", time.Second+busySlack)
			}
			t.Logf("the ask ended %v after the signal was sent", time.Since(sent))
			if code := exitCode(ask.ProcessState); code != 130 {
				t.Errorf("the interrupted ask exited %d, want 130 (the prompt's status); it said %q", code, out.String())
			}
			if got := c.mustAsk("echo clean"); got != "clean\n" {
				t.Errorf("the ask after the interrupt answered %q, want %q", got, "clean\n")
			}
			if left := sleepsIn(c.pid); len(left) > 0 {
				t.Errorf("sleep still runs: %v", left)
			}
			c.agentFDs(fds)
		})
	}
}

// Without a prompt, `signal INT` ends a stream child (`sleep 30` itself,
// not restarted) within a second, on pipes and on a terminal, through
// the control FIFO; the agent exits with 130.
func TestSignalStreamWithoutPrompt(t *testing.T) {
	for _, kind := range childKinds[:2] {
		t.Run(kind.name, func(t *testing.T) {
			checkLeaks(t, true)
			c := startChild(t, kind, []string{"-restart", "never"}, []string{"sleep", "30"})
			sent := time.Now()
			c.verb("signal", "SIGINT").requireCode(t, "signal SIGINT", 0, "")
			if code := c.wait(time.Second + busySlack); code != 130 {
				t.Errorf("agent exit code %d, want 130 (sleep ended by INT)", code)
			}
			t.Logf("the agent exited %v after the signal was sent", time.Since(sent))
		})
	}
}

// signal refuses, with 125 and one line, what it cannot do: an unknown
// signal (nothing written), a session that is not open, no session named
// in sessions mode or one named in stream mode, an agent in exec mode;
// and a number is a signal.
func TestSignalRefused(t *testing.T) {
	checkLeaks(t, true)
	s := startSessionsAgent(t, nil, []string{"sleep", "300"})
	s.host("signal", "-session", "nope", "INT").requireCode(t, "signal a session not open", 125, "not open")
	s.host("signal", "-session", "s1", "BOGUS").requireCode(t, "signal BOGUS", 125, "unknown signal")
	s.host("signal", "INT").requireCode(t, "signal without -session", 125, "-session NAME")
	s.host("open", "s1").requireCode(t, "open s1", 0, "")
	s.host("signal", "-session", "s1", "0").requireCode(t, "signal 0", 125, "unknown signal")
	s.host("signal", "-session", "s1", "SIGFOO").requireCode(t, "signal SIGFOO", 125, "unknown signal")
	s.host("signal", "-session", "s1", "CONT").requireCode(t, "signal CONT", 0, "")
	s.host("signal", "-session", "s1", "18").requireCode(t, "signal 18", 0, "")
	if res := s.host("signal", "-session", "s1"); res.code != 125 || !strings.Contains(res.stderr, "usage") {
		t.Errorf("signal without SIGNAL: exit %d, stderr %q", res.code, res.stderr)
	}

	a := startAgent(t, agentConfig{flags: []string{"-restart", "never"}, program: []string{"sleep", "300"}})
	a.waitStatus("a running child", func(st status) bool { return st.State == "running" && st.Child.PID > 0 })
	a.host("signal", "-session", "s1", "INT").requireCode(t, "signal -session in stream mode", 125, "sessions")
	a.host("signal", "NOSUCH").requireCode(t, "signal NOSUCH", 125, "unknown signal")

	e := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: []string{"cat"}})
	e.waitStatus("exec mode serving", func(st status) bool { return st.Mode == "exec" && st.State == "running" })
	e.host("signal", "INT").requireCode(t, "signal in exec mode", 125, "exec mode")
	// Nothing reached exec mode's DIR/in as a request.
	if res := e.host("send", "hello"); res.code != 0 || res.stdout != "hello\n" {
		t.Fatalf("send: exit %d, %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	if st := e.waitStatus("the send completed", func(st status) bool { return st.Requests.Completed == 1 }); st.Requests.Accepted != 1 {
		t.Errorf("requests %+v: want the send's alone", st.Requests)
	}
	if !a.exited() {
		a.requireRunning()
	}
	for _, x := range []*agent{s, a, e} {
		x.stop()
	}
}
