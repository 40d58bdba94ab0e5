//go:build linux

package main

import (
	"errors"
	"flag"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/bridge/config"
	"github.com/fifobridge/fifobridge/turn"
)

// Without PROGRAM, run says where it goes, on the command line and in a
// container (`docker run IMAGE` with no command), in one line.
func TestRunNoProgramHint(t *testing.T) {
	for _, args := range [][]string{nil, {"--"}, {"-mode", "exec", "--"}} {
		_, err := runConfig(args)
		if !errors.Is(err, config.ErrNoProgram) {
			t.Fatalf("run %q: %v, want %v", args, err, config.ErrNoProgram)
		}
		msg := err.Error()
		for _, want := range []string{"-- PROGRAM", "docker run IMAGE my-cli"} {
			if !strings.Contains(msg, want) {
				t.Errorf("run %q says %q, which does not name %q", args, msg, want)
			}
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("run %q says more than one line: %q", args, msg)
		}
	}
}

// The stop signal is HUP for an interactive child, one on a terminal or
// in a conversation (a shell ignores TERM, on pipes too), TERM otherwise;
// -stop-signal wins.
func TestRunStopSignalDefault(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want syscall.Signal
	}{
		{nil, syscall.SIGTERM},
		{[]string{"-mode", "exec"}, syscall.SIGTERM},
		{[]string{"-tty"}, syscall.SIGHUP},
		{[]string{"-prompt", `^\$ $`}, syscall.SIGHUP},
		{[]string{"-tty", "-prompt", `^\$ $`}, syscall.SIGHUP},
		{[]string{"-prompt", `^\$ $`, "-stop-signal", "TERM"}, syscall.SIGTERM},
		{[]string{"-tty", "-stop-signal", "INT"}, syscall.SIGINT},
	} {
		cfg, err := runConfig(append(tc.args, "--", "sh"))
		if err != nil {
			t.Fatalf("run %q: %v", tc.args, err)
		}
		if cfg.StopSignal != tc.want {
			t.Errorf("run %q: stop signal %v, want %v", tc.args, cfg.StopSignal, tc.want)
		}
	}
}

// -continuation and -settle reach the agent's configuration, from the
// command line or FIFOBRIDGE_CONTINUATION and FIFOBRIDGE_SETTLE; -settle 0
// is at once. -continuation without -prompt, or a bad expression, is the
// agent's own failure, in one line.
func TestRunConversationFlags(t *testing.T) {
	cfg, err := runConfig([]string{"-prompt", `^>>> $`, "--", "python3"})
	if err != nil || cfg.Continuation != nil || cfg.Settle != turn.DefaultSettle {
		t.Fatalf("defaults: %v, continuation %v, settle %v", err, cfg.Continuation, cfg.Settle)
	}
	cfg, err = runConfig([]string{"-prompt", `^>>> $`, "-continuation", `^\.\.\. $`, "-settle", "0", "--", "python3"})
	if err != nil || cfg.Continuation == nil || cfg.Continuation.String() != `^\.\.\. $` || cfg.Settle != turn.SettleAtOnce {
		t.Fatalf("flags: %v, continuation %v, settle %v", err, cfg.Continuation, cfg.Settle)
	}
	t.Setenv("FIFOBRIDGE_CONTINUATION", `^> $`)
	t.Setenv("FIFOBRIDGE_SETTLE", "5ms")
	cfg, err = runConfig([]string{"-prompt", `^>>> $`, "--", "python3"})
	if err != nil || cfg.Continuation == nil || cfg.Continuation.String() != `^> $` || cfg.Settle != 5*time.Millisecond {
		t.Fatalf("environment: %v, continuation %v, settle %v", err, cfg.Continuation, cfg.Settle)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-continuation", `^\.\.\. $`}, "-prompt is not given"},
		{[]string{"-prompt", `^>>> $`, "-continuation", `(`}, "invalid -continuation"},
		{[]string{"-prompt", `^>>> $`, "-settle", "-1ms"}, "invalid -settle"},
	} {
		_, err := runConfig(append(tc.args, "--", "python3"))
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("run %q: %v, want one line with %q", tc.args, err, tc.want)
		}
	}
}

// Every setting of the table is a flag of run, and FIFOBRIDGE_<NAME> set
// to its default is taken as the flag would be.
func TestRunSettingsFromEnvironment(t *testing.T) {
	for _, s := range config.Settings {
		if s.Default == "" {
			continue
		}
		t.Setenv(envName(s.Name), s.Default)
	}
	if _, err := runConfig([]string{"--", "sh"}); err != nil {
		t.Fatalf("every setting's default from the environment: %v", err)
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	(&config.Run{}).Define(fs)
	for _, s := range config.Settings {
		if fs.Lookup(s.Name) == nil {
			t.Errorf("-%s is not a flag of run", s.Name)
		}
	}
}

// -mode sessions and its settings are taken (bridge.Run refuses to serve
// it until its engine lands).
func TestRunSessionsFlags(t *testing.T) {
	t.Setenv("FIFOBRIDGE_SESSION_IDLE", "1m")
	cfg, err := runConfig([]string{"-mode", "sessions", "-max-sessions", "2", "-tty", "-tee", "--", "sh"})
	if err != nil || cfg.Mode != "sessions" || cfg.MaxSessions != 2 || cfg.SessionIdle != time.Minute || !cfg.Tty || !cfg.Tee {
		t.Fatalf("sessions flags: %v, %+v", err, cfg)
	}
	if _, err := runConfig([]string{"-mode", "sessions", "-max-sessions", "0", "--", "sh"}); err == nil || !strings.Contains(err.Error(), "-max-sessions") {
		t.Errorf("-max-sessions 0: %v", err)
	}
}
