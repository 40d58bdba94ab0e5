//go:build linux

package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDockerSessions is issue 28's smoke test of sessions in a container:
// an agent in -mode sessions as the container's PID 1, on a host
// directory bind-mounted at /run/fifobridge (group-owned and setgid, as
// a pod's volume is), driven from the host by a user of the directory's
// group who is not root: open a shell on a terminal and one on pipes, ask
// each (a cd in one does not move the other), ls, health -session, close
// one (its tree gone, the other still answers), then the container
// stopped with a session still open, which the agent closes: exit 0,
// nothing left in the container, the directory or the engine.
func TestDockerSessions(t *testing.T) {
	t.Parallel()
	requireDocker(t)
	requireRoot(t)
	requireReachable(t, member)
	d := buildImages(t)
	dir := hostSetups[0].makeDir(t) // 2770, group dirGroup
	c := d.start(t, containerOpts{
		busybox: true,
		env:     []string{"FIFOBRIDGE_MODE=sessions", `FIFOBRIDGE_PROMPT=^\$ $`, "FIFOBRIDGE_STDERR=out", "FIFOBRIDGE_STOP_TIMEOUT=5s", "PS1=$ "},
		flags:   []string{"--network", "none", "-v", dir + ":" + containerDir},
		program: []string{"sh", "-i"},
	})
	c.dir, c.in, c.out = dir, filepath.Join(dir, "in"), filepath.Join(dir, "out")
	agentPID := c.hostPID()

	run := func(want int, args ...string) string {
		t.Helper()
		res := runAs(t, member, nil, append(args[:1:1], append([]string{"-dir", dir}, args[1:]...)...)...)
		if res.code != want {
			t.Fatalf("fifobridge %q as the group member exited %d, want %d; stdout %q stderr:\n%s", args, res.code, want, res.stdout, res.stderr)
		}
		return res.stdout
	}
	run(0, "health", "-wait", "30s")
	run(0, "open", "-tty", "sh1")
	run(0, "open", "-tty=false", "sh2")
	if got := run(0, "ask", "-session", "sh1", "cd /bin && pwd"); got != "/bin\n" {
		t.Fatalf("sh1 answered %q to cd /bin && pwd", got)
	}
	if got := run(0, "ask", "-session", "sh2", "pwd"); got != "/\n" {
		t.Fatalf("sh2 answered %q to pwd: the cd in sh1 moved it?", got)
	}
	ls := run(0, "ls")
	for _, name := range []string{"sh1", "sh2"} {
		if !strings.Contains(ls, name) {
			t.Fatalf("ls does not list %s:\n%s", name, ls)
		}
	}
	var listed []listedSession
	if err := json.Unmarshal([]byte(run(0, "ls", "-json")), &listed); err != nil || len(listed) != 2 {
		t.Fatalf("ls -json: %v, %+v; want sh1 and sh2", err, listed)
	}
	slices.SortFunc(listed, func(a, b listedSession) int { return strings.Compare(a.Name, b.Name) })
	if listed[0].Name != "sh1" || !listed[0].Tty || listed[1].Name != "sh2" || listed[1].Tty {
		t.Fatalf("ls -json: %+v, want sh1 on a terminal and sh2 on pipes", listed)
	}
	run(0, "health", "-session", "sh1")

	// sh1's tree, a background job included, goes with it; sh2 stays.
	run(0, "ask", "-session", "sh1", "sleep 1000 &")
	run(0, "close", "sh1")
	if kids := childrenOf(agentPID); len(kids) != 1 {
		t.Fatalf("the agent's children after sh1 closed: %s; want sh2's shell alone", describe(kids))
	}
	if _, err := os.Lstat(filepath.Join(dir, "sessions", "sh1")); !os.IsNotExist(err) {
		t.Fatalf("DIR/sessions/sh1 after close: %v", err)
	}
	run(125, "ask", "-session", "sh1", "pwd")
	// The status file, which health reads, is rewritten after the close.
	if !eventually(hangTimeout, func() bool { return runAs(t, member, nil, "health", "-dir", dir, "-session", "sh1").code == 1 }) {
		t.Fatalf("health -session sh1 still exits 0 %v after sh1 closed", hangTimeout)
	}
	run(125, "close", "sh1")
	if got := run(0, "ask", "-session", "sh2", "echo still here"); got != "still here\n" {
		t.Fatalf("sh2 answered %q after sh1 closed", got)
	}
	requireNoReplies(t, dir)

	// A stop closes what is still open: sh2, and sh3 with its job.
	run(0, "open", "sh3")
	run(0, "ask", "-session", "sh3", "sleep 1000 &")
	docker(t, "stop", "-t", "30", c.name)
	if code := c.exitCode(dockerTimeout); code != 0 {
		t.Fatalf("the container exited %d after docker stop with two sessions open, want 0", code)
	}
	if fifos := fifosUnder(dir); len(fifos) > 0 {
		t.Fatalf("FIFOs left in the host directory: %v", fifos)
	}
	if ents, err := os.ReadDir(filepath.Join(dir, "sessions")); err == nil && len(ents) > 0 {
		t.Fatalf("DIR/sessions after the stop: %v", ents)
	}
}

// listedSession is what the smoke test reads of an entry of ls -json.
type listedSession struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
	Tty  bool   `json:"tty"`
}
