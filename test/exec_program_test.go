//go:build linux

package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExecProgramAtStart (issue 18): in exec mode PROGRAM is looked up on
// PATH at start, as a stream child's is. One that is missing ends the
// agent with 127, one that is not executable with 126, with one clear
// line, before it makes anything in DIR: no directory, no FIFOs, no lock,
// no status file, no replies/. -exit-map applies to these codes.
func TestExecProgramAtStart(t *testing.T) {
	t.Parallel()
	noExec := filepath.Join(t.TempDir(), "noexec")
	if err := os.WriteFile(noExec, []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	onlyRoot := filepath.Join(sharedTemp(t), "onlyroot")
	if err := writeUnforked(onlyRoot, []byte("#!/bin/sh\nexit 0\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		program string
		flags   []string
		want    int
		env     []string
	}{
		// As a shell does: a name on PATH that is there but not
		// executable is 126, not 127.
		{"not executable on PATH", "noexec", nil, 126, []string{"PATH=" + filepath.Dir(noExec) + ":/usr/bin:/bin"}},
		// Executable for the agent, not for the child's -user.
		{"not executable for -user", onlyRoot, []string{"-user", "2000:3000", "-cgroup", "off"}, 126, nil},
		{"not found in PATH", "fifobridge-no-such-program", nil, 127, nil},
		{"not found by path", "/nonexistent/program", nil, 127, nil},
		{"not executable", noExec, nil, 126, nil},
		{"a directory", t.TempDir(), nil, 126, nil},
		{"mapped", "/nonexistent/program", []string{"-exit-map", "127=3"}, 3, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			fresh := filepath.Join(t.TempDir(), "fb")
			existing := t.TempDir()
			for _, dir := range []string{fresh, existing} {
				args := append([]string{"run", "-mode", "exec", "-dir", dir}, tc.flags...)
				code, stderr := runAgent(t, tc.env, append(args, "--", tc.program)...)
				if code != tc.want {
					t.Errorf("run %q exited %d, want %d; stderr:\n%s", args, code, tc.want, stderr)
				}
				requireOneLine(t, "run", stderr)
				if !strings.Contains(stderr, tc.program) {
					t.Errorf("run's error does not name %s: %q", tc.program, stderr)
				}
			}
			if _, err := os.Lstat(fresh); !os.IsNotExist(err) {
				t.Errorf("the agent made %s (%v) for a program that cannot start", fresh, err)
			}
			if ents, err := os.ReadDir(existing); err != nil || len(ents) != 0 {
				t.Errorf("the agent made %v in DIR (%v) for a program that cannot start", ents, err)
			}
		})
	}
}
