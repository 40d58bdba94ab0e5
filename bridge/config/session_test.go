//go:build linux

package config

import (
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/fifobridge/fifobridge/protocol"
)

func open(c protocol.Control) *protocol.ParsedControl {
	c.Op, c.Session = protocol.OpOpen, "s1"
	return &protocol.ParsedControl{Control: c}
}

func ptr[T any](v T) *T { return &v }

// An open line's settings make a new Run for the session; the run's own
// value is left exactly as it was, its slices too.
func TestSessionOverrides(t *testing.T) {
	run := parse(t, "-mode", "sessions", "-allow-args", "-prompt", `^\$ $`, "-continuation", `^> $`)
	before := *run
	before.Args = slices.Clone(run.Args)
	s, err := run.Session(open(protocol.Control{
		Tty: ptr(true), Size: "100x30", Prompt: ptr(`^# $`),
		Args: []string{"-x"}, Env: []string{"A=1", "B=x=y", "A=2"}, Cwd: "/tmp/../srv",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if !s.Tty || s.TtySize.Cols != 100 || s.TtySize.Rows != 30 || s.Prompt.String() != `^# $` ||
		s.Continuation.String() != `^> $` || s.WorkDir != "/srv" ||
		!slices.Equal(s.Args, []string{"-i", "-x"}) || !slices.Equal(s.Env, []string{"A=2", "B=x=y"}) {
		t.Errorf("session: tty %v %v, prompt %v, continuation %v, cwd %q, args %q, env %q",
			s.Tty, s.TtySize, s.Prompt, s.Continuation, s.WorkDir, s.Args, s.Env)
	}
	if !reflect.DeepEqual(*run, before) {
		t.Errorf("the run's value changed:\n%+v\nwas\n%+v", *run, before)
	}
	env := s.Spec(nil).Env
	if !slices.Contains(env, "A=2") || slices.Contains(env, "A=1") || !slices.Contains(env, "B=x=y") {
		t.Errorf("the session's child environment lacks its env: %q", env)
	}
	if run.Spec(nil).Env != nil {
		t.Errorf("the run's children got an environment of their own")
	}

	// Nothing given: the run's settings.
	same, err := run.Session(open(protocol.Control{}))
	if err != nil || !reflect.DeepEqual(*same, before) {
		t.Errorf("an open line without settings: %v\n%+v, want the run's\n%+v", err, same, before)
	}
	// No prompt: no conversation, and the run's continuation goes with it.
	plain, err := run.Session(open(protocol.Control{Prompt: ptr("")}))
	if err != nil || plain.Prompt != nil || plain.Continuation != nil {
		t.Errorf("prompt \"\": %v, prompt %v, continuation %v", err, plain.Prompt, plain.Continuation)
	}
}

// The stop signal follows the session's own terminal and prompt, unless
// -stop-signal was given.
func TestSessionStopSignal(t *testing.T) {
	for _, tc := range []struct {
		run  []string
		open protocol.Control
		want syscall.Signal
	}{
		{[]string{"-mode", "sessions"}, protocol.Control{}, syscall.SIGTERM},
		{[]string{"-mode", "sessions"}, protocol.Control{Tty: ptr(true)}, syscall.SIGHUP},
		{[]string{"-mode", "sessions"}, protocol.Control{Prompt: ptr(`\$ $`)}, syscall.SIGHUP},
		{[]string{"-mode", "sessions", "-tty"}, protocol.Control{Tty: ptr(false)}, syscall.SIGTERM},
		{[]string{"-mode", "sessions", "-prompt", ">"}, protocol.Control{Prompt: ptr("")}, syscall.SIGTERM},
		{[]string{"-mode", "sessions", "-stop-signal", "INT"}, protocol.Control{Tty: ptr(true)}, syscall.SIGINT},
		{[]string{"-mode", "sessions", "-tty", "-stop-signal", "TERM"}, protocol.Control{}, syscall.SIGTERM},
	} {
		s, err := parse(t, tc.run...).Session(open(tc.open))
		if err != nil || s.StopSignal != tc.want {
			t.Errorf("run %q, open %+v: %v, %v; want %v", tc.run, tc.open, err, s.StopSignal, tc.want)
		}
	}
}

// What an open line may not set, or sets wrong, is one line for the
// client to print.
func TestSessionRefuses(t *testing.T) {
	allowed := parse(t, "-mode", "sessions", "-allow-args")
	for _, tc := range []struct {
		run  *Run
		open protocol.Control
		want string
	}{
		{parse(t, "-mode", "sessions"), protocol.Control{Args: []string{"-x"}}, "-arg, -env and -cwd need the agent's -allow-args"},
		{parse(t, "-mode", "sessions"), protocol.Control{Env: []string{"A=1"}}, "-allow-args"},
		{parse(t, "-mode", "sessions"), protocol.Control{Cwd: "/"}, "-allow-args"},
		{allowed, protocol.Control{Env: []string{"A"}}, "invalid -env"},
		{allowed, protocol.Control{Env: []string{"=1"}}, "invalid -env"},
		{allowed, protocol.Control{Cwd: "rel"}, "invalid -cwd"},
		{allowed, protocol.Control{Args: []string{"a\x00b"}}, "invalid -arg"},
		{allowed, protocol.Control{Size: "80"}, "invalid -size"},
		{allowed, protocol.Control{Prompt: ptr("(\n")}, "invalid -prompt"},
		{allowed, protocol.Control{Prompt: ptr(">"), Continuation: ptr("[")}, "invalid -continuation"},
		{allowed, protocol.Control{Continuation: ptr("> ")}, "invalid -continuation"},
	} {
		before := *tc.run
		s, err := tc.run.Session(open(tc.open))
		if err == nil || s != nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("open %+v: %v, want one line with %q", tc.open, err, tc.want)
		}
		if !reflect.DeepEqual(*tc.run, before) {
			t.Errorf("open %+v changed the run's value", tc.open)
		}
	}
}
