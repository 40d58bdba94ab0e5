//go:build linux

package test

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// `fifobridge type` writes its TEXT and a newline (none with -n), or its
// stdin, into stream mode's DIR/in and a session's in, on pipes and on
// a terminal: cat gives it back on the output FIFO.
func TestTypeIntoInput(t *testing.T) {
	for _, kind := range childKinds {
		t.Run(kind.name, func(t *testing.T) {
			checkLeaks(t, true)
			c := startChild(t, kind, nil, []string{"cat"})
			out := openReader(t, c.outPath())
			fds := c.agentFDs(-1)
			c.verb("type", "-n", "hello").requireCode(t, "type -n hello", 0, "")
			c.verb("type", "typed", "words").requireCode(t, "type typed words", 0, "")
			res := runAs(t, nil, []byte("from stdin"), append([]string{"type", "-dir", c.dir}, c.sessionArgs(nil)...)...)
			res.requireCode(t, "type from stdin", 0, "")
			if !kind.tty {
				if got := out.readLine(); got != "hellotyped words" {
					t.Errorf("cat gave back %q, want %q", got, "hellotyped words")
				}
				if got := out.readLine(); got != "from stdin" {
					t.Errorf("cat gave back %q, want %q", got, "from stdin")
				}
			} else {
				// The terminal echoes each line, and cat writes it again.
				got := readUntilCount(t, out, "from stdin\r\n", 2)
				if strings.Count(got, "hellotyped words\r\n") != 2 {
					t.Errorf("the terminal gave %q, want the typed line echoed and from cat", got)
				}
			}
			c.agentFDs(fds)
		})
	}
}

// `type` answers the question a running command asks, inside the turn of
// the ask that ran it: the same ask gets the rest of the answer and ends
// at the prompt, with its status.
func TestTypeAnswersAsk(t *testing.T) {
	for _, kind := range childKinds {
		t.Run(kind.name, func(t *testing.T) {
			checkLeaks(t, true)
			c := startChild(t, kind, []string{"-prompt", statusPrompt, "-stderr", "out"}, statusShell)
			ask, out := c.startAsk("-timeout", "20s", `read -r x; echo "got $x"; false`)
			c.waitBusy()
			c.verb("type", "an answer").requireCode(t, "type an answer", 0, "")
			ask.Wait()
			if code := exitCode(ask.ProcessState); code != 1 || !strings.Contains(out.String(), "got an answer\n") {
				t.Errorf("the ask exited %d with %q, want 1 (false's status) and the typed answer", code, out.String())
			}
			if got := c.mustAsk("echo next"); got != "next\n" {
				t.Errorf("the next ask answered %q", got)
			}
		})
	}
}

// `type -eof` ends the child's input once what it typed is read: `wc -c`
// on pipes counts the typed bytes and ends; on a terminal the EOF
// character is typed after them, and wc (in a session) or cat (stream
// mode) sees the end of its input and ends.
func TestTypeEOF(t *testing.T) {
	for _, kind := range childKinds {
		t.Run(kind.name, func(t *testing.T) {
			checkLeaks(t, true)
			program := []string{"wc", "-c"}
			if kind.tty && !kind.sessions {
				program = []string{"cat"}
			}
			c := startChild(t, kind, []string{"-restart", "never"}, program)
			out := openReader(t, c.outPath())
			c.verb("type", "-n", "hel").requireCode(t, "type -n hel", 0, "")
			c.verb("type", "-eof", "lo").requireCode(t, "type -eof lo", 0, "")
			switch {
			case !kind.tty:
				if got := strings.TrimSpace(out.readLine()); got != "6" {
					t.Errorf("wc -c counted %q, want 6", got)
				}
			case kind.sessions:
				readUntil(t, out, "6\r\n")
			default:
				readUntil(t, out, "hello\r\nhello\r\n")
			}
			if kind.sessions {
				if !eventually(hangTimeout, func() bool { return len(c.statusSessions()) == 0 }) {
					t.Errorf("the session of %s is still open after its child read end-of-file", program[0])
				}
				c.host("type", "-session", c.session, "x").requireCode(t, "type into the closed session", 125, "not open")
				return
			}
			if code := c.wait(hangTimeout); code != 0 {
				t.Errorf("agent exit code %d, want 0: %s ended by end-of-file", code, program[0])
			}
		})
	}
}

// On pipes, an ended input stays ended until the child exits: a second
// `type -eof` is refused with 125, saying that its text was typed, and
// what it typed goes to the next child, which gets a fresh stdin again.
func TestTypeEOFRestart(t *testing.T) {
	checkLeaks(t, true)
	c := startChild(t, childKinds[0], []string{"-restart", "always", "-backoff-min", "10ms"},
		[]string{"/bin/sh", "-c", `cat; echo "input ended"; exec sleep 30`})
	out := openReader(t, c.outPath())
	c.verb("type", "-eof", "one").requireCode(t, "type -eof one", 0, "")
	if got := out.readLine() + "|" + out.readLine(); got != "one|input ended" {
		t.Fatalf("the first child gave %q", got)
	}
	// Its text went in all the same, and its line says so.
	res := c.verb("type", "-eof", "two")
	res.requireCode(t, "a second type -eof", 125, "(all 4 bytes typed, the input not ended)")
	if !strings.Contains(res.stderr, "ended already") {
		t.Errorf("a second type -eof said %q, want why: the input is ended already", res.stderr)
	}
	c.verb("signal", "TERM").requireCode(t, "signal TERM", 0, "")
	if got := out.readLine(); got != "two" {
		t.Errorf("the next child read %q first, want what was typed after the end", got)
	}
	c.verb("type", "-eof", "three").requireCode(t, "type -eof to the next child", 0, "")
	if got := out.readLine() + "|" + out.readLine(); got != "three|input ended" {
		t.Errorf("the next child gave %q", got)
	}
}

// type writes nothing and exits 125 with one line where there is no such
// input: exec mode, sessions mode without -session, a session that is
// not open, -session in stream mode.
func TestTypeRefused(t *testing.T) {
	checkLeaks(t, true)
	s := startSessionsAgent(t, nil, []string{"cat"})
	s.host("type", "x").requireCode(t, "type without -session", 125, "-session NAME")
	s.host("type", "-session", "nope", "x").requireCode(t, "type into a session not open", 125, "not open")
	s.host("type", "-session", "../x", "x").requireCode(t, "type into a bad name", 125, "invalid session name")

	a := startAgent(t, agentConfig{program: []string{"cat"}})
	a.waitStatus("a running child", func(st status) bool { return st.State == "running" && st.Child.PID > 0 })
	a.host("type", "-session", "s1", "x").requireCode(t, "type -session in stream mode", 125, "sessions")

	e := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: []string{"cat"}})
	e.waitStatus("exec mode serving", func(st status) bool { return st.Mode == "exec" && st.State == "running" })
	e.host("type", "hello").requireCode(t, "type in exec mode", 125, "exec mode")
	e.host("type", "-eof", "hello").requireCode(t, "type -eof in exec mode", 125, "exec mode")
	if res := e.host("send", "hello"); res.code != 0 || res.stdout != "hello\n" {
		t.Fatalf("send: exit %d, %q, stderr %q", res.code, res.stdout, res.stderr)
	}
	if st := e.waitStatus("the send completed", func(st status) bool { return st.Requests.Completed == 1 }); st.Requests.Accepted != 1 {
		t.Errorf("requests %+v: want the send's alone", st.Requests)
	}
	for _, x := range []*agent{s, a, e} {
		x.stop()
	}
}

// `type` writes into the input FIFO the status file names, also where
// the run's -in put it outside DIR (it once wrote DIR/in alone, and
// exited 125 there: "no agent is reading DIR/in").
func TestTypeMovedInput(t *testing.T) {
	checkLeaks(t, false)
	t.Parallel()
	requireBusybox(t)
	elsewhere := t.TempDir()
	in, out := filepath.Join(elsewhere, "myin"), filepath.Join(elsewhere, "myout")
	a := startAgent(t, agentConfig{flags: []string{"-in", in, "-out", out}, program: []string{busybox, "cat"}})
	a.in, a.out = in, out
	a.waitChild()
	r := openReader(t, out)
	fds := settledFDs(t, a)
	a.host("type", "moved").requireCode(t, "type moved", 0, "")
	if got := r.readLine(); got != "moved" {
		t.Errorf("cat gave back %q, want %q", got, "moved")
	}
	if _, err := os.Lstat(filepath.Join(a.dir, "in")); err == nil {
		t.Errorf("%s/in exists although -in points elsewhere", a.dir)
	}
	if !eventually(hangTimeout, func() bool { return settledFDs(t, a) == fds }) {
		t.Errorf("the agent holds %d descriptors after type, %d before:\n%s", settledFDs(t, a), fds, fdTargets(strconv.Itoa(a.pid)))
	}
	a.stop()
}

// The moved input as the users the docs name: a member of DIR's group
// types into it where nobody but root may replace DIR's entries (the
// sticky bit: 3770); where every member may (2770) the status file that
// names the moved FIFO could be any member's, and type, by a member or
// by root, is refused with 125 and types nothing; a stranger, who may
// not enter DIR, is refused.
func TestTypeMovedInputUsers(t *testing.T) {
	requireRoot(t)
	requireBusybox(t)
	for _, cred := range []*syscall.Credential{member, stranger} {
		requireReachable(t, cred)
	}
	for _, tc := range []struct {
		name   string
		mode   os.FileMode
		follow bool
	}{
		{"sticky", 0o770 | os.ModeSetgid | os.ModeSticky, true},
		{"open", 0o770 | os.ModeSetgid, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			checkLeaks(t, false)
			t.Parallel()
			elsewhere := groupDir(t, 0, 0o770|os.ModeSetgid)
			in, out := filepath.Join(elsewhere, "myin"), filepath.Join(elsewhere, "myout")
			a := startAgent(t, agentConfig{dir: groupDir(t, 0, tc.mode), flags: []string{"-in", in, "-out", out},
				program: []string{busybox, "cat"}})
			a.in, a.out = in, out
			a.waitChild()
			r := openReader(t, out)
			res := runAs(t, member, nil, "type", "-dir", a.dir, "typed")
			want := "typed"
			if !tc.follow {
				// Nobody follows it there, root included: the status
				// file could be any member's. The test's own line is
				// then the first cat gives back.
				res.requireCode(t, "type as a member, DIR 2770", 125, "not followed")
				a.host("type", "as root").requireCode(t, "type as root, DIR 2770", 125, "not followed")
				w, err := os.OpenFile(in, os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				_, err = w.Write([]byte("written\n"))
				w.Close()
				if err != nil {
					t.Fatal(err)
				}
				want = "written"
			} else {
				res.requireCode(t, "type as a member, DIR 3770", 0, "")
			}
			if got := r.readLine(); got != want {
				t.Errorf("cat gave back %q first, want %q", got, want)
			}
			runAs(t, stranger, nil, "type", "-dir", a.dir, "x").requireCode(t, "type as a stranger", 125, "")
			a.stop()
		})
	}
}
