package main

import (
	"errors"
	"strings"
	"syscall"
	"testing"
)

// Without PROGRAM, run says where it goes, on the command line and in a
// container (`docker run IMAGE` with no command), in one line.
func TestRunNoProgramHint(t *testing.T) {
	for _, args := range [][]string{nil, {"--"}, {"-mode", "exec", "--"}} {
		_, _, err := runConfig(args)
		if !errors.Is(err, errNoProgram) {
			t.Fatalf("run %q: %v, want %v", args, err, errNoProgram)
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
		cfg, _, err := runConfig(append(tc.args, "--", "sh"))
		if err != nil {
			t.Fatalf("run %q: %v", tc.args, err)
		}
		if cfg.StopSignal != tc.want {
			t.Errorf("run %q: stop signal %v, want %v", tc.args, cfg.StopSignal, tc.want)
		}
	}
}
