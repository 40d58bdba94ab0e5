//go:build linux

package config

import (
	"errors"
	"os"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/fifobridge/fifobridge/internal/testgate"
	"github.com/fifobridge/fifobridge/protocol"
)

// requireRoot skips t unless the agent could start children as others.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		testgate.Skip(t, "needs root: only root may start children as other users")
	}
}

// -allow-users resolves each name or UID once, at start, into the
// credential a session runs with: its primary group, no supplementary
// groups; a UID passwd does not list has a group of the same number.
func TestAllowUsers(t *testing.T) {
	requireRoot(t)
	r := parse(t, "-mode", "sessions", "-allow-users", "nobody, 2001")
	want := []AllowedUser{
		{"nobody", &syscall.Credential{Uid: 65534, Gid: 65534, Groups: []uint32{}}},
		{"2001", &syscall.Credential{Uid: 2001, Gid: 2001, Groups: []uint32{}}},
	}
	if !reflect.DeepEqual(r.AllowUsers, want) {
		t.Errorf("-allow-users nobody,2001: %+v", r.AllowUsers)
	}
	if got := r.ChildUsers(); len(got) != 2 || got[0].Uid != 65534 || got[1].Uid != 2001 {
		t.Errorf("ChildUsers: %+v", got)
	}
	// The run's -user is a child user too, root never.
	r = parse(t, "-mode", "sessions", "-user", "2001", "-allow-users", "0,2001,2002")
	if got := r.ChildUsers(); len(got) != 2 || got[0].Uid != 2001 || got[1].Uid != 2002 {
		t.Errorf("ChildUsers with -user 2001 and -allow-users 0,2001,2002: %+v", got)
	}
}

// -allow-users is the agent's own failure (one line that names it) in a
// mode other than sessions, and for a user that does not resolve or is
// not a user alone.
func TestAllowUsersRefused(t *testing.T) {
	requireRoot(t)
	for _, args := range [][]string{
		{"-allow-users", "nobody"},
		{"-mode", "exec", "-allow-users", "nobody"},
		{"-mode", "sessions", "-allow-users", "fifobridge-no-such-user"},
		{"-mode", "sessions", "-allow-users", "nobody,"},
		{"-mode", "sessions", "-allow-users", "nobody:nogroup"},
	} {
		r, fs := define()
		if err := fs.Parse(args); err != nil {
			t.Fatalf("%q: %v", args, err)
		}
		r.Program = "sh"
		err := r.Finish("/wd")
		if err == nil || !strings.Contains(err.Error(), "invalid -allow-users") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line naming -allow-users", args, err)
		}
	}
}

// An open line's user is one of -allow-users, found by the name or UID
// it is given as: the session runs as it, with its own HOME, USER and
// LOGNAME whatever the agent's are, and its PROGRAM is looked up for it
// at its start. Any other user, or any user without -allow-users, is
// refused in one line, and the run's value stays as it was.
func TestSessionUser(t *testing.T) {
	requireRoot(t)
	t.Setenv("HOME", "/home/agent")
	t.Setenv("USER", "agent")
	run := parse(t, "-mode", "sessions", "-allow-users", "nobody,2001")
	run.ProgramPath = "/bin/sh"
	before := *run
	for _, name := range []string{"nobody", "65534"} {
		s, err := run.Session(open(protocol.Control{User: name}))
		if err != nil || s.Credential == nil || s.Credential.Uid != 65534 || s.Credential.Gid != 65534 || !s.OwnUser || s.ProgramPath != "" {
			t.Fatalf("user %s: %v, %+v", name, err, s)
		}
		env := s.Spec(nil).Env
		for _, kv := range []string{"HOME=/nonexistent", "USER=nobody", "LOGNAME=nobody"} {
			if !slices.Contains(env, kv) {
				t.Errorf("user %s: the environment lacks %s: %q", name, kv, env)
			}
		}
		if slices.Contains(env, "HOME=/home/agent") || slices.Contains(env, "USER=agent") {
			t.Errorf("user %s: the agent's HOME or USER is left: %q", name, env)
		}
	}
	// No passwd entry: HOME is /, and no USER is made up.
	s, err := run.Session(open(protocol.Control{User: "2001"}))
	if err != nil || s.Credential.Uid != 2001 {
		t.Fatalf("user 2001: %v", err)
	}
	if env := s.Spec(nil).Env; !slices.Contains(env, "HOME=/") || slices.ContainsFunc(env, func(kv string) bool {
		return strings.HasPrefix(kv, "USER=") || strings.HasPrefix(kv, "HOME=/home")
	}) {
		t.Errorf("user 2001, not in passwd: %q", env)
	}
	for _, tc := range []struct {
		run  *Run
		user string
		want string
	}{
		{run, "2002", `user "2002" is not one of the agent's -allow-users`},
		{run, "root", `user "root" is not one of the agent's -allow-users`},
		{run, "fifobridge-no-such-user", "not one of the agent's -allow-users"},
		{parse(t, "-mode", "sessions"), "nobody", "-user needs the agent's -allow-users"},
	} {
		s, err := tc.run.Session(open(protocol.Control{User: tc.user}))
		if err == nil || s != nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("user %s: %v, want one line with %q", tc.user, err, tc.want)
		}
	}
	if !reflect.DeepEqual(*run, before) {
		t.Errorf("the run's value changed:\n%+v\nwas\n%+v", *run, before)
	}
}

// An open line's own PROGRAM replaces the run's and its arguments (its
// -arg values follow its own), only with -allow-args; a sessions agent
// with -allow-args may be run with no PROGRAM, and then an open line
// without one is refused.
func TestSessionCommand(t *testing.T) {
	run := parse(t, "-mode", "sessions", "-allow-args")
	run.ProgramPath = "/bin/sh"
	s, err := run.Session(open(protocol.Control{Command: []string{"bash", "--norc", "-i"}, Args: []string{"-x"}}))
	if err != nil || s.Program != "bash" || s.ProgramPath != "" || !slices.Equal(s.Args, []string{"--norc", "-i", "-x"}) {
		t.Fatalf("command: %v, %+v", err, s)
	}
	if spec := s.Spec(nil); spec.Program != "bash" || spec.Path != "" {
		t.Errorf("the session's child: %+v", spec)
	}
	if run.Program != "sh" || !slices.Equal(run.Args, []string{"-i"}) || run.ProgramPath != "/bin/sh" {
		t.Errorf("the run's PROGRAM changed: %q %q %q", run.Program, run.Args, run.ProgramPath)
	}

	none, fs := define()
	if err := fs.Parse([]string{"-mode", "sessions", "-allow-args"}); err != nil {
		t.Fatal(err)
	}
	if err := none.Finish("/wd"); err != nil {
		t.Fatalf("sessions mode, -allow-args, no PROGRAM: %v", err)
	}
	if s, err := none.Session(open(protocol.Control{Command: []string{"cat"}})); err != nil || s.Program != "cat" {
		t.Errorf("an open with its own PROGRAM on an agent without one: %v", err)
	}
	for _, tc := range []struct {
		run  *Run
		open protocol.Control
		want string
	}{
		{none, protocol.Control{}, "the agent was run with no PROGRAM"},
		{none, protocol.Control{Args: []string{"-x"}}, "the agent was run with no PROGRAM"},
		{parse(t, "-mode", "sessions"), protocol.Control{Command: []string{"cat"}}, "needs the agent's -allow-args"},
		{run, protocol.Control{Command: []string{""}}, "invalid PROGRAM"},
		{run, protocol.Control{Command: []string{"cat", "a\x00"}}, "NUL"},
	} {
		s, err := tc.run.Session(open(tc.open))
		if err == nil || s != nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("open %+v: %v, want one line with %q", tc.open, err, tc.want)
		}
	}
}

// Only a sessions agent with -allow-args may be run without PROGRAM.
func TestFinishNoProgram(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-mode", "exec", "-allow-args"},
		{"-mode", "sessions"},
	} {
		r, fs := define()
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := r.Finish("/wd"); !errors.Is(err, ErrNoProgram) {
			t.Errorf("%q without PROGRAM: %v, want ErrNoProgram", args, err)
		}
	}
}
