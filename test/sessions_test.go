//go:build linux

package test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// shPrompt is the prompt of an interactive sh: "# " as root, "$ " else.
const shPrompt = `^[#$] $`

// Issue 28, test 1: two terminal shells and a python REPL on pipes open
// at once; each answers its own asks; cd in one does not move another;
// list lists them; the status file has them.
func TestSessionsShellsAndREPL(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startSessions(t, []string{"-allow-args", "-stderr", "out"}, []string{"/bin/sh"})
	a.mustOpen("sh1", map[string]any{"tty": true, "prompt": shPrompt})
	a.mustOpen("sh2", map[string]any{"tty": true, "prompt": shPrompt})
	a.mustOpen("py", map[string]any{"prompt": `^>>> $`, "args": []string{"-c", "exec python3 -u -i"}})

	a.mustAsk("sh1", "cd /tmp")
	if got := a.mustAsk("sh1", "pwd"); got != "/tmp\n" {
		t.Errorf("sh1 pwd after cd: %q", got)
	}
	wd, _ := os.Getwd()
	if got := a.mustAsk("sh2", "pwd"); got != wd+"\n" {
		t.Errorf("sh2 pwd: %q, want %q: a cd in sh1 moved it", got, wd)
	}
	if got := a.mustAsk("py", "print(6*7)"); got != "42\n" {
		t.Errorf("py: %q", got)
	}
	if got := listed(a.control(map[string]any{"op": "list"})); !slices.Equal(got, []string{"py", "sh1", "sh2"}) {
		t.Errorf("list: %v", got)
	}
	var names []string
	a.waitStatus("three sessions", func(status) bool {
		names = names[:0]
		for _, s := range a.statusSessions() {
			if in, _ := s["inputs"].(map[string]any); in["in"] != nil && in["ask"] != nil {
				names = append(names, s["name"].(string))
			}
		}
		return len(names) == 3
	})
	if code := a.stop(); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if left := a.sessionNames(); len(left) > 0 {
		t.Errorf("left in DIR/sessions: %v", left)
	}
}

// Issue 28, test 2: close ends the session's whole tree, a background job
// included, removes its directory, and the other sessions answer; a
// second close is refused.
func TestSessionsCloseEndsTree(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startSessions(t, nil, []string{"/bin/sh"})
	a.mustOpen("one", map[string]any{"tty": true, "prompt": shPrompt})
	a.mustOpen("two", map[string]any{"tty": true, "prompt": shPrompt})
	out := a.mustAsk("one", "sleep 300 & echo $!")
	job, err := strconv.Atoi(strings.TrimSpace(out))
	if err != nil || !alive(job) {
		t.Fatalf("background job %q not running: %v", out, err)
	}
	f := a.closeSession("one")
	if f.typ() != "closed" {
		t.Fatalf("close: %v", f)
	}
	if alive(job) {
		t.Errorf("the background job %d outlived its session's close", job)
	}
	if _, err := os.Lstat(filepath.Join(a.dir, "sessions", "one")); !os.IsNotExist(err) {
		t.Errorf("the session's directory is still there: %v", err)
	}
	if got := a.mustAsk("two", "echo here"); got != "here\n" {
		t.Errorf("two after one's close: %q", got)
	}
	if f := a.closeSession("one"); f.typ() != "error" {
		t.Errorf("a second close: %v", f)
	}
	if code := a.stop(); code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
}

// Issue 28, test 4: bad names are refused and nothing is made outside
// DIR/sessions; a link or a file another user planted at
// DIR/sessions/NAME is refused and left alone.
func TestSessionsNames(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startSessions(t, nil, []string{"/bin/cat"})
	before, _ := os.ReadDir(a.dir)
	for _, bad := range []string{"../x", ".hid", "a/b", strings.Repeat("n", 65), ""} {
		if f := a.openSession(bad, nil); f.typ() != "error" {
			t.Errorf("open %q: %v", bad, f)
		}
	}
	after, _ := os.ReadDir(a.dir)
	if len(after) != len(before) {
		t.Errorf("DIR had %d entries, now %d", len(before), len(after))
	}
	if names := a.sessionNames(); len(names) > 0 {
		t.Errorf("DIR/sessions: %v", names)
	}

	target := t.TempDir()
	link := filepath.Join(a.dir, "sessions", "planted")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(a.dir, "sessions", "file")
	if err := os.WriteFile(file, []byte("theirs"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{link, file} {
		if err := os.Lchown(p, int(stranger.Uid), int(stranger.Gid)); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{"planted", "file"} {
		if f := a.openSession(name, nil); f.typ() != "error" {
			t.Errorf("open %s over a planted entry: %v", name, f)
		}
	}
	if got, err := os.Readlink(link); err != nil || got != target {
		t.Errorf("the planted link: %q, %v", got, err)
	}
	if b, err := os.ReadFile(file); err != nil || string(b) != "theirs" {
		t.Errorf("the planted file: %q, %v", b, err)
	}
	if ents, _ := os.ReadDir(target); len(ents) > 0 {
		t.Errorf("made where the link points: %v", ents)
	}
}

// Issue 28, test 5: -max-sessions, -session-idle, reuse, and args, env and
// cwd only with -allow-args.
func TestSessionsLimits(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	t.Run("max-sessions and reuse", func(t *testing.T) {
		a := startSessions(t, []string{"-max-sessions", "2"}, []string{"/bin/cat"})
		pid := a.mustOpen("a", nil)
		a.mustOpen("b", nil)
		if f := a.openSession("c", nil); f.typ() != "error" || !strings.Contains(fmt.Sprint(f["error"]), "max-sessions") {
			t.Errorf("a third session: %v", f)
		}
		f := a.openSession("a", map[string]any{"reuse": true})
		if f.typ() != "opened" || f["reused"] != true || f.num("pid") != pid {
			t.Errorf("reuse: %v, want pid %d", f, pid)
		}
		if f := a.openSession("a", nil); f.typ() != "error" {
			t.Errorf("open again without reuse: %v", f)
		}
		if f := a.openSession("a", map[string]any{"reuse": true, "args": []string{"-u"}}); f.typ() != "error" ||
			!strings.Contains(fmt.Sprint(f["error"]), "-allow-args") {
			t.Errorf("reuse with args without -allow-args: %v", f)
		}
		for _, more := range []map[string]any{{"args": []string{"-u"}}, {"env": []string{"K=V"}}, {"cwd": "/tmp"}} {
			a.closeSession("b")
			if f := a.openSession("b", more); f.typ() != "error" {
				t.Errorf("open with %v without -allow-args: %v", more, f)
			}
		}
	})
	t.Run("allow-args", func(t *testing.T) {
		a := startSessions(t, []string{"-allow-args"}, []string{"/bin/sh"})
		a.mustOpen("x", map[string]any{"prompt": `^> $`, "env": []string{"GREETING=hi"}, "cwd": "/tmp",
			"args": []string{"-c", `while printf '> '; IFS= read -r l; do eval "$l"; done`}})
		if got := a.mustAsk("x", `echo "$GREETING $PWD"`); got != "hi /tmp\n" {
			t.Errorf("env and cwd: %q", got)
		}
	})
	t.Run("session-idle", func(t *testing.T) {
		a := startSessions(t, []string{"-session-idle", "500ms"}, []string{"/bin/cat"})
		a.mustOpen("idle", nil)
		a.waitStatus("the idle session", func(status) bool { return len(a.statusSessions()) == 1 })
		a.waitStatus("the idle session closed", func(status) bool { return len(a.statusSessions()) == 0 })
		if names := a.sessionNames(); len(names) > 0 {
			t.Errorf("DIR/sessions: %v", names)
		}
	})
}

// Issue 28, test 6: TERM to an agent with four sessions whose children
// ignore HUP and TERM: it exits 0 within -stop-timeout + 1 s, and nothing
// is left (processes, cgroups, directories).
func TestSessionsStopIgnored(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	cg := testCgroup(t)
	a := startSessions(t, []string{"-stop-timeout", "2s", "-cgroup", cg},
		binSh(`trap '' HUP TERM; sleep 300 & printf '> '; while :; do sleep 1; done`))
	for i := range 4 {
		more := map[string]any{"prompt": `^> $`, "tty": i%2 == 0}
		a.mustOpen(fmt.Sprintf("s%d", i), more)
	}
	start := time.Now()
	a.signal(syscall.SIGTERM)
	code := a.wait(hangTimeout)
	if took := time.Since(start); took > stopBound(2*time.Second) {
		t.Errorf("the stop took %v, want at most -stop-timeout + 1 s", took)
	}
	if code != 0 {
		t.Errorf("exit code %d, want 0", code)
	}
	if left := subCgroups(cg); len(left) > 0 {
		t.Errorf("cgroups left: %v", left)
	}
	if left := a.sessionNames(); len(left) > 0 {
		t.Errorf("left in DIR/sessions: %v", left)
	}
}

// Fifty opens and closes, on terminals and on pipes, leave the agent's
// descriptors, goroutines and /dev/pts entries where they were, while
// another process opens and closes terminals of its own.
func TestSessionsOpenCloseCycles(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	startPTYChurner(t)
	a := startSessions(t, []string{"-stderr", "out"}, []string{"/bin/sh", "-i"})
	cycle := func(i int) {
		tty := i%2 == 0
		a.mustOpen("c", map[string]any{"prompt": shPrompt, "tty": tty})
		// The count sees the agent's terminals, and only those.
		if n, want := agentTerminals(a.pid), map[bool]int{true: 1, false: 0}[tty]; n != want {
			t.Fatalf("cycle %d: the agent holds %d terminals with a session open (tty %v), want %d", i, n, tty, want)
		}
		if f := a.closeSession("c"); f.typ() != "closed" {
			t.Fatalf("cycle %d: close: %v", i, f)
		}
	}
	settled := func() (fds, goroutines, pts int) {
		st := a.waitStatus("no session open", func(status) bool { return len(a.statusSessions()) == 0 })
		return st.FDs, *st.Goroutines, agentTerminals(a.pid)
	}
	for i := range 4 {
		cycle(i)
	}
	fds0, g0, pts0 := settled()
	for i := range 50 {
		cycle(i)
	}
	var fds1, g1, pts1 int
	if !eventually(hangTimeout, func() bool {
		fds1, g1, pts1 = settled()
		return fds1 <= fds0 && g1 <= g0 && pts1 <= pts0
	}) {
		t.Errorf("after 50 cycles: %d descriptors (%d before), %d goroutines (%d), %d terminals (%d)",
			fds1, fds0, g1, g0, pts1, pts0)
	}
}
