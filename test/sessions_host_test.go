//go:build linux

package test

import (
	"strings"
	"testing"
)

// This file drives sessions mode through the host commands, as a script
// does: open, ask -session, ls, health -session, close, and the refusals
// of send and ask without -session. The wire itself is
// sessions_wire_test.go's.

// startSessionsAgent starts an agent in sessions mode running PROGRAM
// for each session, and waits until it serves.
func startSessionsAgent(t *testing.T, flags []string, program []string) *agent {
	t.Helper()
	a := startAgent(t, agentConfig{flags: append([]string{"-mode", "sessions"}, flags...), program: program})
	a.waitStatus("sessions mode serving", func(st status) bool { return st.Mode == "sessions" && st.State == "running" })
	return a
}

// host runs `fifobridge CMD -dir DIR ARGS...`.
func (a *agent) host(cmd string, args ...string) hostResult {
	a.t.Helper()
	return runAs(a.t, nil, nil, append([]string{cmd, "-dir", a.dir}, args...)...)
}

// requireCode fails t unless res exited with code, and, when code is not
// 0, said why in exactly one line that holds want.
func (res hostResult) requireCode(t *testing.T, what string, code int, want string) {
	t.Helper()
	if res.code != code {
		t.Fatalf("%s: exit %d, want %d; stdout %q, stderr:\n%s", what, res.code, code, res.stdout, res.stderr)
	}
	if code == 0 {
		return
	}
	if strings.Count(res.stderr, "\n") != 1 || !strings.Contains(res.stderr, want) {
		t.Fatalf("%s: stderr %q, want one line with %q", what, res.stderr, want)
	}
}

// lsNames is the first column of ls's lines.
func lsNames(out string) []string {
	var names []string
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if f := strings.Fields(line); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names
}

// open, close and ls to an agent in exec mode write nothing and exit
// 125 with one line that says which mode it is in.
func TestSessionsHostWrongMode(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: []string{"cat"}})
	a.waitStatus("exec mode serving", func(st status) bool { return st.Mode == "exec" && st.State == "running" })
	for _, args := range [][]string{{"open", "sh1"}, {"close", "sh1", "sh2"}, {"ls"}, {"ask", "-session", "sh1", "x"}} {
		a.host(args[0], args[1:]...).requireCode(t, strings.Join(args, " "), 125, "is in exec mode")
	}
	a.host("health", "-session", "sh1").requireCode(t, "health -session", 1, "no sessions")
	// Any line they wrote would have come before this request's.
	if res := a.host("send", "hello"); res.code != 0 || res.stdout != "hello\n" {
		t.Fatalf("send: exit %d, %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	st := a.waitStatus("the send completed", func(st status) bool { return st.Requests.Completed == 1 })
	if st.Requests.Accepted != 1 || st.Requests.Rejected != 0 {
		t.Errorf("requests %+v: want the send's alone", st.Requests)
	}
	if code := a.stop(); code != 0 {
		t.Errorf("agent exit code %d, want 0", code)
	}
}
