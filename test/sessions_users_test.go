//go:build linux

package test

// Issue 34, test 4 and test 6's open NAME -- PROGRAM: sessions of users
// of their own (open -user, allowed by the run's -allow-users) cannot
// signal, trace or read one another, nor drive the agent; a session's own
// PROGRAM (open NAME -- PROGRAM [ARG...], with -allow-args), on an agent
// run with or without one.

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The users of the sessions: nobody, with a passwd entry, and
// stranger's uid, with none (hostusers_test.go).
var sessionUsers = []struct {
	name string // as open -user gives it
	uid  uint32
}{{"nobody", nobody}, {strconv.Itoa(int(stranger.Uid)), stranger.Uid}}

// sessionIdentity is what `id -u; id -g; id -G; echo "$HOME|$USER"`
// prints in a session of uid: its primary group only, HOME and USER
// from its passwd entry, or HOME / and no USER without one.
func sessionIdentity(t *testing.T, uid uint32) string {
	t.Helper()
	home, name, gid := "/", "", strconv.Itoa(int(uid))
	if u, err := user.LookupId(strconv.Itoa(int(uid))); err == nil {
		home, name, gid = u.HomeDir, u.Username, u.Gid
	}
	return fmt.Sprintf("%d\n%s\n%s\n%s|%s\n", uid, gid, gid, home, name)
}

// Two sessions of two users from -allow-users, one on a terminal and one
// on pipes: each shell runs as its user, with its primary group alone and
// its own HOME and USER (and the terminal is its user's); neither
// can kill the other's shell (EPERM), read its environment or write the
// agent's FIFOs; both stay open and answer. Closing them leaves the
// agent's descriptors, children and cgroups as they were.
func TestSessionsUsersApart(t *testing.T) {
	requireRoot(t)
	checkLeaks(t, true)
	cg := testCgroup(t)
	// A directory other users may enter: what keeps them out of its FIFOs
	// is the FIFOs' own modes (-perm 0660: in 0620, owned by root).
	dir := filepath.Join(sharedTemp(t), "fb")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	allow := sessionUsers[0].name + "," + sessionUsers[1].name
	a := startAgent(t, agentConfig{dir: dir, program: []string{"/bin/sh", "-i"},
		flags: []string{"-mode", "sessions", "-allow-users", allow, "-cgroup", cg, "-stderr", "out", "-prompt", shPrompt}})
	fds0 := a.waitStatus("sessions mode serving", func(st status) bool { return st.Mode == "sessions" && st.State == "running" }).FDs
	ask := func(session, input string) string {
		t.Helper()
		res := a.host("ask", "-session", session, input)
		res.requireCode(t, fmt.Sprintf("ask %s %q", session, input), 0, "")
		return res.stdout
	}
	names := []string{"a", "b"}
	pids := make([]int, 2)
	for i, u := range sessionUsers {
		tty := fmt.Sprintf("-tty=%v", i == 0) // a on a terminal, b on pipes
		a.host("open", tty, "-user", u.name, names[i]).requireCode(t, "open -user "+u.name, 0, "")
		var err error
		if pids[i], err = strconv.Atoi(strings.TrimSpace(ask(names[i], "echo $$"))); err != nil {
			t.Fatalf("session %s's shell pid: %v", names[i], err)
		}
		if got, want := ask(names[i], `id -u; id -g; id -G; echo "$HOME|$USER"`), sessionIdentity(t, u.uid); got != want {
			t.Errorf("session %s of user %s: id and environment %q, want %q", names[i], u.name, got, want)
		}
		if i == 0 {
			if got := ask(names[i], `stat -c %u "$(tty)"`); got != fmt.Sprintf("%d\n", u.uid) {
				t.Errorf("session %s's terminal belongs to uid %q, want its user's %d", names[i], got, u.uid)
			}
		}
		if ids := procIDs(t, pids[i]); ids != fmt.Sprintf("Uid:%d Gid:%s Groups:", u.uid, primaryGid(u.uid)) {
			t.Errorf("session %s's shell: %s, want user %s with its primary group and no supplementary groups", names[i], ids, u.name)
		}
	}
	// DIR 0755 lets them make reply FIFOs (the agent warns of that), but
	// under -perm 0660 they write no FIFO of the agent's.
	if strings.Contains(a.stderr(), "can write the input FIFO") {
		t.Errorf("the agent warned that a session's user can write DIR/in under -perm 0660:\n%s", a.stderr())
	}
	for i := range names {
		me, other, target := names[i], names[1-i], pids[1-i]
		if got := ask(me, fmt.Sprintf("kill -9 %d 2>/dev/null; echo $?", target)); got != "1\n" {
			t.Errorf("kill -9 of session %s's shell from session %s: %q, want 1 (EPERM)", other, me, got)
		}
		if got := ask(me, fmt.Sprintf("kill -9 %d 2>&1", target)); !strings.Contains(got, "not permitted") {
			t.Errorf("kill -9 of session %s's shell from session %s says %q, want EPERM's text", other, me, got)
		}
		if got := ask(me, fmt.Sprintf("cat /proc/%d/environ >/dev/null 2>&1; echo $?", target)); got == "0\n" {
			t.Errorf("session %s read session %s's environment", me, other)
		}
		for _, fifo := range []string{a.in, a.sessionFile(other, "in"), a.sessionFile(other, "ask"), a.sessionFile(me, "in")} {
			if got := ask(me, fmt.Sprintf("(echo x >%s) 2>/dev/null; echo $?", fifo)); got == "0\n" {
				t.Errorf("session %s wrote %s", me, fifo)
			}
		}
		if !alive(target) {
			t.Fatalf("session %s's shell %d is gone", other, target)
		}
		if got := ask(other, "echo $$"); got != fmt.Sprintf("%d\n", target) {
			t.Errorf("session %s after the kill from %s: %q, want its shell %d to answer", other, me, got, target)
		}
	}
	for _, name := range names {
		a.host("close", name).requireCode(t, "close "+name, 0, "")
	}
	requireAgentBack(t, a, fds0, cg)
}

// procIDs is the real uid, gid and supplementary groups of pid, as its
// /proc status says them.
func procIDs(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		switch f := strings.Fields(v); k {
		case "Uid", "Gid":
			ids = append(ids, k+":"+f[0])
		case "Groups":
			ids = append(ids, k+":"+strings.Join(f, ","))
		}
	}
	return strings.Join(ids, " ")
}

// primaryGid is uid's group from passwd, or the gid of the same number.
func primaryGid(uid uint32) string {
	if u, err := user.LookupId(strconv.Itoa(int(uid))); err == nil {
		return u.Gid
	}
	return strconv.Itoa(int(uid))
}

// requireAgentBack fails t unless the agent a, with no session open, is
// back to fds0 descriptors, has no child and left no cgroup in cg (if
// set), nor anything in DIR/sessions.
func requireAgentBack(t *testing.T, a *agent, fds0 int, cg string) {
	t.Helper()
	var fds int
	if !eventually(5*time.Second, func() bool {
		fds = a.waitStatus("no session", func(status) bool { return len(a.statusSessions()) == 0 }).FDs
		return fds <= fds0 && len(childrenOf(a.pid)) == 0 && (cg == "" || len(leftCgroups(cg)) == 0)
	}) {
		t.Errorf("the agent has %d descriptors (%d before), children %v, cgroups %v", fds, fds0, childrenOf(a.pid), leftCgroups(cg))
	}
	if left := a.sessionNames(); len(left) > 0 {
		t.Errorf("left in DIR/sessions: %v", left)
	}
}

// With -perm 0666 a session's user could write the control FIFO: the
// agent says so at start, naming -allow-users.
func TestSessionsUsersAccessWarning(t *testing.T) {
	requireRoot(t)
	checkLeaks(t, true)
	a := startSessionsAgent(t, []string{"-allow-users", "nobody", "-perm", "0666"}, []string{"cat"})
	if !eventually(hangTimeout, func() bool { return strings.Contains(a.stderr(), "-allow-users: the child's user can drive the agent") }) {
		t.Errorf("no warning that a session's user can write the control FIFO:\n%s", a.stderr())
	}
}

// A user not in -allow-users, or any user without it, is refused with
// 125 in one line and nothing is started; -allow-users is the agent's own
// failure (125, one line naming it) outside sessions mode and for a user
// that does not resolve.
func TestSessionsUsersRefused(t *testing.T) {
	requireRoot(t)
	checkLeaks(t, true)
	a := startSessionsAgent(t, []string{"-allow-users", "nobody"}, []string{"cat"})
	fds0 := a.waitStatus("serving", func(status) bool { return true }).FDs
	for _, u := range []string{strconv.Itoa(int(stranger.Uid)), "root", "0", "fifobridge-no-such-user"} {
		a.host("open", "-user", u, "s").requireCode(t, "open -user "+u, 125, "is not one of the agent's -allow-users")
		if ls := a.host("ls"); ls.code != 0 || ls.stdout != "" {
			t.Errorf("ls after open -user %s: exit %d, %q", u, ls.code, ls.stdout)
		}
		if kids := childrenOf(a.pid); len(kids) > 0 {
			t.Errorf("open -user %s started %v", u, kids)
		}
	}
	requireAgentBack(t, a, fds0, "")

	b := startSessionsAgent(t, nil, []string{"cat"})
	b.host("open", "-user", "nobody", "s").requireCode(t, "open -user without -allow-users", 125, "needs the agent's -allow-users")
	if kids := childrenOf(b.pid); len(kids) > 0 {
		t.Errorf("open -user without -allow-users started %v", kids)
	}

	for _, flags := range [][]string{
		{"-allow-users", "nobody"},
		{"-mode", "exec", "-allow-users", "nobody"},
		{"-mode", "sessions", "-allow-users", "fifobridge-no-such-user"},
		{"-mode", "sessions", "-allow-users", "nobody:nogroup"},
	} {
		args := append(append([]string{"run", "-dir", filepath.Join(t.TempDir(), "fb")}, flags...), "--", "cat")
		code, stderr := runAgent(t, nil, args...)
		if code != 125 || !strings.Contains(stderr, "-allow-users") {
			t.Errorf("run %q: exit %d, want 125 naming -allow-users:\n%s", flags, code, stderr)
		}
		requireOneLine(t, fmt.Sprintf("run %q", flags), stderr)
	}
}

// open NAME -- PROGRAM [ARG...] runs that program with those words (open's
// -arg after them), on an agent run without PROGRAM: there an open
// without one is refused with 125. An own PROGRAM that is missing or not
// executable for the session's user, or whose first run fails as one,
// gives 127 or 126 and leaves no session.
func TestSessionsOwnProgram(t *testing.T) {
	requireRoot(t)
	checkLeaks(t, true)
	cg := testCgroup(t)
	rootOnly := filepath.Join(sharedTemp(t), "root-only")
	if err := writeUnforked(rootOnly, []byte("#!/bin/sh\nexec cat\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	a := startSessionsAgent(t, []string{"-allow-args", "-allow-users", "nobody", "-cgroup", cg}, nil)
	fds0 := a.waitStatus("serving", func(status) bool { return true }).FDs

	a.host("open", "s0").requireCode(t, "open without PROGRAM", 125, "no PROGRAM")
	a.host("open", "-arg", "x", "s0").requireCode(t, "open -arg without PROGRAM", 125, "no PROGRAM")

	script := `printf '%s|' "$@"; echo; exec cat`
	a.host("open", "-arg", "d", "s1", "--", "/bin/sh", "-c", script, "sh", "a", "b c").requireCode(t, "open -- PROGRAM", 0, "")
	out := openReader(t, a.sessionFile("s1", "out"))
	out.expectLine("a|b c|d|")
	in := openWriter(t, a.sessionFile("s1", "in"))
	in.writeLine("ping")
	out.expectLine("ping")
	in.close()
	out.close()
	a.host("close", "s1").requireCode(t, "close s1", 0, "")

	// A relative PROGRAM is taken from the session's -cwd, a name looked
	// up on its own PATH, as its shell would.
	tools := filepath.Dir(rootOnly)
	a.host("open", "-cwd", tools, "s4", "--", "./root-only").requireCode(t, "open -cwd DIR -- ./PROGRAM", 0, "")
	a.host("open", "-env", "PATH="+tools+":"+os.Getenv("PATH"), "s5", "--", "root-only").requireCode(t, "open -env PATH=DIR -- PROGRAM", 0, "")
	a.host("close", "s4", "s5").requireCode(t, "close s4 s5", 0, "")

	// The root-only script runs for root, and is 126 for nobody.
	a.host("open", "s2", "--", rootOnly).requireCode(t, "open -- a root-only PROGRAM as root", 0, "")
	a.host("close", "s2").requireCode(t, "close s2", 0, "")
	for _, tc := range []struct {
		what string
		args []string
		code int
		want string
	}{
		{"a missing PROGRAM", []string{"--", "fifobridge-no-such-program"}, 127, "fifobridge-no-such-program"},
		{"a PROGRAM not executable", []string{"--", "/etc/passwd"}, 126, "/etc/passwd"},
		{"a PROGRAM only root may run, as nobody", []string{"-user", "nobody", "s3", "--", rootOnly}, 126, rootOnly},
		{"a first run that fails", []string{"--", "/bin/sh", "-c", "echo cannot go on >&2; exit 127"}, 127, `its last line is "cannot go on"`},
	} {
		args := tc.args
		if args[0] == "--" {
			args = append([]string{"s3"}, args...)
		}
		a.host("open", args...).requireCode(t, tc.what, tc.code, tc.want)
		if ls := a.host("ls"); ls.code != 0 || ls.stdout != "" {
			t.Errorf("%s: ls exits %d and prints %q, want no session", tc.what, ls.code, ls.stdout)
		}
	}
	requireAgentBack(t, a, fds0, cg)

	// Without -allow-args an open's own PROGRAM is refused; without it
	// and without PROGRAM, the run is.
	b := startSessionsAgent(t, nil, []string{"cat"})
	b.host("open", "s", "--", "cat").requireCode(t, "open -- PROGRAM without -allow-args", 125, "-allow-args")
	if kids := childrenOf(b.pid); len(kids) > 0 {
		t.Errorf("open -- PROGRAM without -allow-args started %v", kids)
	}
	code, stderr := runAgent(t, nil, "run", "-dir", filepath.Join(t.TempDir(), "fb"), "-mode", "sessions", "--")
	if code != 125 || !strings.Contains(stderr, "no PROGRAM") {
		t.Errorf("run -mode sessions without -allow-args and PROGRAM: exit %d, want 125:\n%s", code, stderr)
	}
	requireOneLine(t, "run without PROGRAM", stderr)
}
