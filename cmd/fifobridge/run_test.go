package main

import (
	"errors"
	"strings"
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
