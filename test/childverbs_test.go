//go:build linux

package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// This file is what the tests of the verbs that act on one child (type,
// signal, and the control FIFO that carries them in stream mode) share:
// the child they reach, stream mode's or a session's, on pipes or a
// terminal.

// statusPS1 is a shell prompt that carries $?, and statusPrompt the
// -prompt that reads it into the group "status".
const (
	statusPS1    = `[$?] $ `
	statusPrompt = `^\[(?P<status>\d+)\] \$ $`
)

// statusShell is PROGRAM for an interactive shell whose prompt carries
// $?: on pipes it writes its prompt to stderr, which -stderr out brings
// to the conversation.
var statusShell = []string{"env", "PS1=" + statusPS1, "/bin/sh", "-i"}

// childKind is where the child a verb reaches runs: stream mode's one
// child or a session, on pipes or a terminal.
type childKind struct {
	name     string
	sessions bool
	tty      bool
}

var childKinds = []childKind{
	{"stream pipes", false, false},
	{"stream tty", false, true},
	{"session pipes", true, false},
	{"session tty", true, true},
}

// childTarget is one child of an agent that type and signal reach:
// stream mode's (session "") or session's.
type childTarget struct {
	*agent
	session string
}

// startChild starts an agent in the mode of kind, with the run flags
// given, running program: in stream mode as its child, in sessions mode
// as the one session, "s1", it opens (-tty on a terminal). It returns
// once the child runs (with a prompt: once it is ready).
func startChild(t *testing.T, kind childKind, flags []string, program []string) childTarget {
	t.Helper()
	if !kind.sessions {
		if kind.tty {
			flags = append([]string{"-tty"}, flags...)
		}
		a := startAgent(t, agentConfig{flags: flags, program: program})
		a.waitStatus("a running child", func(st status) bool { return st.State == "running" && st.Child.PID > 0 })
		return childTarget{agent: a}
	}
	a := startSessionsAgent(t, flags, program)
	a.host("open", fmt.Sprintf("-tty=%v", kind.tty), "s1").requireCode(t, "open s1", 0, "")
	return childTarget{agent: a, session: "s1"}
}

// verb runs `fifobridge CMD -dir DIR [-session NAME] ARGS...`.
func (c childTarget) verb(cmd string, args ...string) hostResult {
	c.t.Helper()
	return c.host(cmd, c.sessionArgs(args)...)
}

// sessionArgs is args after -session NAME for a session's child.
func (c childTarget) sessionArgs(args []string) []string {
	if c.session == "" {
		return args
	}
	return append([]string{"-session", c.session}, args...)
}

// startAsk starts `fifobridge ask` of the child in the background.
func (c childTarget) startAsk(args ...string) (*exec.Cmd, *strings.Builder) {
	c.t.Helper()
	return c.agent.startAsk(c.sessionArgs(args)...)
}

// mustAsk asks the child and fails unless the turn ended at its prompt.
func (c childTarget) mustAsk(input string) string {
	c.t.Helper()
	res := c.host("ask", c.sessionArgs([]string{"-timeout", "20s", input})...)
	if res.code != 0 {
		c.t.Fatalf("ask %q: exit %d, stdout %q, stderr:\n%s", input, res.code, res.stdout, res.stderr)
	}
	return res.stdout
}

// outPath is the child's output FIFO.
func (c childTarget) outPath() string {
	if c.session == "" {
		return c.out
	}
	return c.sessionFile(c.session, "out")
}

// readUntil reads from e until what it read holds want, at most
// hangTimeout, and returns what it read.
func readUntil(t *testing.T, e *fifoEnd, want string) string {
	t.Helper()
	return readUntilCount(t, e, want, 1)
}

// readUntilCount reads from e until what it read holds want n times, at
// most hangTimeout, and returns what it read.
func readUntilCount(t *testing.T, e *fifoEnd, want string, n int) string {
	t.Helper()
	deadline := time.Now().Add(hangTimeout)
	var got []byte
	for strings.Count(string(got), want) < n {
		b, err := e.readSome(4096, deadline)
		if err != nil {
			t.Fatalf("read %s: got %q, want it to hold %q %d times: %v", e.path, got, want, n, err)
		}
		got = append(got, b...)
	}
	return string(got)
}

// agentFDs is the agent's descriptor count, once it has settled at want
// or below (want < 0: as it is now). A conversation keeps its last
// asker's reply FIFO open for that asker's next ask, at most one, from
// when its last frame is written: descriptors of DIR/replies are not
// counted, and more than one fails t.
func (c childTarget) agentFDs(want int) int {
	c.t.Helper()
	pid := fmt.Sprint(c.pid)
	replies := filepath.Join(c.dir, "replies") + "/"
	var n, kept int
	count := func() {
		n, kept = 0, 0
		ents, _ := os.ReadDir("/proc/" + pid + "/fd")
		for _, e := range ents {
			if target, _ := os.Readlink(filepath.Join("/proc", pid, "fd", e.Name())); strings.HasPrefix(target, replies) {
				kept++
			} else {
				n++
			}
		}
	}
	if !eventually(hangTimeout, func() bool { count(); return (want < 0 || n <= want) && kept <= 1 }) {
		c.t.Errorf("the agent holds %d descriptors and %d of DIR/replies, want %d and at most 1:\n%s", n, kept, want, fdTargets(pid))
	}
	return n
}

// requireSymlinkRefused fails t unless path is still the symbolic link
// to target that was put there, and target is unchanged (id, from
// fileID).
func requireSymlinkRefused(t *testing.T, path, target, id string) {
	t.Helper()
	if got, err := os.Readlink(path); err != nil || got != target {
		t.Errorf("%s is no longer the link to %s: %q, %v", path, target, got, err)
	}
	if got := fileID(t, target); got != id {
		t.Errorf("the link's target %s changed: %s, was %s", target, got, id)
	}
}

// waitBusy waits until the child's turn is busy: it was given an ask's
// input, which it has not answered yet.
func (c childTarget) waitBusy() {
	c.t.Helper()
	if c.session == "" {
		c.waitTurn("a busy turn", func(st turnStatus) bool { return st.Child.Turn.State == "busy" })
		return
	}
	if !eventually(hangTimeout, func() bool {
		for _, s := range c.statusSessions() {
			turn, _ := s["turn"].(map[string]any)
			if s["name"] == c.session && turn != nil && turn["state"] == "busy" {
				return true
			}
		}
		return false
	}) {
		c.t.Fatalf("session %s's turn never became busy", c.session)
	}
}
