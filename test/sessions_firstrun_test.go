//go:build linux

package test

import (
	"strings"
	"testing"
	"time"
)

// firstRunLimit is the bound on an open whose program cannot
// start, "within 2 s": a user would notice more (the old code took 3.2 s
// of restarts, or exited 0). A test checks it with busySlack on top, as
// every bound a user would notice: a busy machine may make the open slow,
// never wrong.
const firstRunLimit = 2 * time.Second

// Issue 32, test 6: the README's sessions pattern runs env as PROGRAM and
// names the real program with -arg. `open -arg no-such-program`, with and
// without a prompt, on pipes and on a terminal, with the child's stderr
// the agent's or in its output, exits 127 within 2 s (and busySlack) with one line that
// quotes env's, and leaves no session: ls is empty, and the one slot of
// -max-sessions 1 is free for a good open. A program env finds and
// cannot run gives 126; a shell that cannot find it, 127. env's line
// still reaches the agent's stderr when that is the child's, and the
// agent's descriptors are back where they were.
func TestSessionsFirstRunFails(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	env := busybox // env(1)'s path, see TestMain
	type open struct {
		name  string
		flags []string
		code  int
		want  []string // in the quoted line
	}
	var opens []open
	for _, tty := range []bool{false, true} {
		for _, prompt := range []bool{false, true} {
			o := open{name: "pipes", code: 127, want: []string{"no-such-program", "No such file or directory"}}
			if tty {
				o.name, o.flags = "tty", append(o.flags, "-tty")
			}
			if prompt {
				o.name, o.flags = o.name+" prompt", append(o.flags, "-prompt", shPrompt)
			}
			opens = append(opens, o)
		}
	}
	opens = append(opens,
		open{name: "not executable", flags: []string{"-arg", "/etc/passwd"}, code: 126, want: []string{"/etc/passwd", "Permission denied"}},
		open{name: "a shell", flags: []string{"-arg", "sh", "-arg", "-c"}, code: 127, want: []string{"no-such-program", "not found"}})

	for _, stderr := range []string{"log", "out"} {
		t.Run("stderr "+stderr, func(t *testing.T) {
			a := startSessionsAgent(t, []string{"-allow-args", "-max-sessions", "1", "-stderr", stderr}, []string{env})
			fds0 := a.waitStatus("serving", func(status) bool { return true }).FDs
			for _, o := range opens {
				start := time.Now()
				res := a.host("open", append(o.flags, "-arg", "no-such-program", "s1")...)
				took := time.Since(start)
				res.requireCode(t, o.name, o.code, `its last line is "`)
				_, quoted, _ := strings.Cut(res.stderr, `its last line is "`)
				for _, want := range o.want {
					if !strings.Contains(quoted, want) {
						t.Errorf("%s: stderr %q quotes no line with %q", o.name, res.stderr, want)
					}
				}
				if took > firstRunLimit+busySlack {
					t.Errorf("%s: open took %v, want at most %v and busySlack", o.name, took, firstRunLimit)
				}
				if ls := a.host("ls"); ls.code != 0 || ls.stdout != "" {
					t.Errorf("%s: ls exits %d and prints %q, want 0 and nothing", o.name, ls.code, ls.stdout)
				}
				a.host("open", "-arg", "cat", "good").requireCode(t, o.name+": a good open after it", 0, "")
				a.host("close", "good").requireCode(t, o.name+": close", 0, "")
			}
			n := 0 // env's lines: it names itself as it was run
			for _, line := range strings.Split(a.stderr(), "\n") {
				if strings.HasPrefix(line, env+": ") {
					n++
				}
			}
			if stderr == "log" && n != 3 {
				t.Errorf("env's line is %d times on the agent's stderr, want 3 (its runs on pipes):\n%s", n, a.stderr())
			}
			var fds int
			if !eventually(5*time.Second, func() bool {
				fds = a.waitStatus("no session", func(st status) bool { return len(a.statusSessions()) == 0 }).FDs
				return fds <= fds0
			}) {
				t.Errorf("the agent has %d descriptors, %d before the opens", fds, fds0)
			}
			if left := a.sessionNames(); len(left) > 0 {
				t.Errorf("left in DIR/sessions: %v", left)
			}
		})
	}
}

// The two sides of the rule: with a prompt, a first run that ends with
// 127 after its first second, never having been ready, still fails the
// open and quotes its line; a first run that ends at once otherwise (true
// exits 0) is a child that started: open exits 0, as it always did.
func TestSessionsFirstRunEdges(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startSessionsAgent(t, []string{"-allow-args", "-max-sessions", "1", "-restart", "never"}, []string{busybox})
	// The sleep is what is tested: the child ends after its first second.
	late := []string{"-prompt", shPrompt, "-arg", "sh", "-arg", "-c", "-arg", "sleep 1.2; echo nothing here >&2; exit 127", "late"}
	res := a.host("open", late...)
	res.requireCode(t, "a first run never ready", 127, `its last line is "nothing here"`)
	if ls := a.host("ls"); ls.stdout != "" {
		t.Errorf("ls after the late failure: %q", ls.stdout)
	}
	a.host("open", "-arg", "true", "quick").requireCode(t, "a first run that ends with 0 at once", 0, "")
	a.waitStatus("the quick session closed", func(status) bool { return len(a.statusSessions()) == 0 })
	a.host("open", "-arg", "cat", "good").requireCode(t, "a good open after them", 0, "")
}
