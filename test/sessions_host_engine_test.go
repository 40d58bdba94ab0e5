//go:build linux

package test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// These tests need the sessions engine (bridge/sessions): they pass once
// it serves -mode sessions.

// hostShPrompt is an interactive sh's prompt on a terminal: "# " as
// root, "$ " else.
const hostShPrompt = `^[#$] $`

// Issue 28 from the host: two terminal shells opened with `open`, each
// answering its own asks (a cd in one does not move the other), listed
// by ls, healthy by health -session; close of one and of a session not
// open exits 125 naming the second, the first is gone and the other
// still answers; send and ask without -session write nothing and exit
// 125 with one line.
func TestSessionsHostCommands(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startSessionsAgent(t, nil, []string{"/bin/sh"})
	a.host("open", "-tty", "-prompt", hostShPrompt, "sh1").requireCode(t, "open sh1", 0, "")
	a.host("open", "-tty", "-prompt", hostShPrompt, "sh2").requireCode(t, "open sh2", 0, "")
	a.host("open", "-reuse", "sh1").requireCode(t, "open -reuse sh1", 0, "")
	a.host("open", "-tty", "sh1").requireCode(t, "open sh1 again", 125, "sh1")
	a.host("open", "../x").requireCode(t, "open ../x", 125, "invalid session name")

	a.host("ask", "-session", "sh1", "cd /tmp").requireAnswer(t, "")
	a.host("ask", "-session", "sh1", "pwd").requireAnswer(t, "/tmp\n")
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	a.host("ask", "-session", "sh2", "pwd").requireAnswer(t, wd+"\n")

	ls := a.host("ls")
	ls.requireCode(t, "ls", 0, "")
	if got := lsNames(ls.stdout); !slices.Equal(got, []string{"sh1", "sh2"}) {
		t.Errorf("ls: %q", ls.stdout)
	}
	for _, line := range strings.Split(strings.TrimSuffix(ls.stdout, "\n"), "\n") {
		if f := strings.Fields(line); len(f) != 6 || f[2] != "running" || f[5] != "ready" {
			t.Errorf("ls line %q: want NAME PID running AGE RESTARTS ready", line)
		}
	}
	lsJSON := a.host("ls", "-json")
	var list []struct {
		Name string `json:"name"`
		PID  int    `json:"pid"`
	}
	if err := json.Unmarshal([]byte(lsJSON.stdout), &list); err != nil || len(list) != 2 || list[0].PID <= 0 {
		t.Errorf("ls -json: %q (%v)", lsJSON.stdout, err)
	}
	a.host("health", "-session", "sh1").requireCode(t, "health -session sh1", 0, "")
	a.host("health", "-session", "none").requireCode(t, "health -session none", 1, "session none is not open")

	a.host("close", "sh1", "none").requireCode(t, "close sh1 none", 125, "none")
	if got := lsNames(a.host("ls").stdout); !slices.Equal(got, []string{"sh2"}) {
		t.Errorf("ls after close sh1: %v", got)
	}
	a.host("ask", "-session", "sh1", "pwd").requireCode(t, "ask a closed session", 125, "sh1")
	a.host("ask", "-session", "sh2", "echo hi").requireAnswer(t, "hi\n")

	a.host("send", "x").requireCode(t, "send to a sessions agent", 125, "sessions mode")
	a.host("ask", "x").requireCode(t, "ask without -session", 125, "-session")

	a.host("close", "sh2").requireCode(t, "close sh2", 0, "")
	if ls := a.host("ls"); ls.code != 0 || ls.stdout != "" {
		t.Errorf("ls with none open: exit %d, %q", ls.code, ls.stdout)
	}
	if code := a.stop(); code != 0 {
		t.Errorf("agent exit code %d, want 0", code)
	}
}

// An open whose child shows no prompt in time exits 124 naming `close`;
// the session stays open, and close ends it.
func TestSessionsHostOpenTimeout(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startSessionsAgent(t, nil, []string{"/bin/sh"})
	a.host("open", "-tty", "-prompt", "^NEVER$", "-timeout", "1s", "slow").
		requireCode(t, "open without a prompt", 124, "fifobridge close slow")
	if got := lsNames(a.host("ls").stdout); !slices.Equal(got, []string{"slow"}) {
		t.Errorf("ls after the open timed out: %v", got)
	}
	a.host("close", "slow").requireCode(t, "close slow", 0, "")
	if code := a.stop(); code != 0 {
		t.Errorf("agent exit code %d, want 0", code)
	}
}

// `close` answers a session's waiting asks with 125 and a line saying
// that the session is closing; it once said that the agent was stopping,
// while the agent went on serving.
func TestSessionsCloseTellsWaitingAsks(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startSessionsAgent(t, nil, []string{"/bin/sh"})
	a.host("open", "-tty", "-prompt", hostShPrompt, "sh1").requireCode(t, "open sh1", 0, "")
	running := startHost(t, nil, "ask", "-dir", a.dir, "-session", "sh1", "echo begun; sleep 30")
	running.waitFor(len("begun\n"))
	queued := startHost(t, nil, "ask", "-dir", a.dir, "-session", "sh1", "echo queued")
	a.waitStatus("the second ask queued", func(status) bool { return a.sessionQueued("sh1") == 1 })
	a.host("close", "sh1").requireCode(t, "close sh1", 0, "")
	if code := queued.wait(hangTimeout); code != 125 || !strings.Contains(queued.stderr.String(), "session sh1 is closing") ||
		strings.Contains(queued.stderr.String(), "agent is stopping") || strings.Count(queued.stderr.String(), "\n") != 1 {
		t.Errorf("the queued ask exited %d with stderr %q; want 125 and one line saying session sh1 is closing", code, queued.stderr.String())
	}
	if code := running.wait(hangTimeout); code == 0 || code == 125 {
		t.Errorf("the running ask exited %d; want the child's status", code)
	}
	a.host("ls").requireCode(t, "ls after the close", 0, "")
	if code := a.stop(); code != 0 {
		t.Errorf("agent exit code %d, want 0", code)
	}
}

// sessionQueued is how many asks the status file counts as waiting for
// session name.
func (a *agent) sessionQueued(name string) int {
	for _, s := range a.statusSessions() {
		if s["name"] == name {
			turn, _ := s["turn"].(map[string]any)
			n, _ := turn["queued"].(float64)
			return int(n)
		}
	}
	return -1
}
