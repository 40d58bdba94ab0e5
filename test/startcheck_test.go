//go:build linux

package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// startCheckCases are the programs of issue 26 that passed the start check
// and then failed every request: a script in a 0700 root directory, run as
// -user 65534 (checked as the agent, not the child's user), and scripts
// whose #! interpreter is missing or not executable. Each needs root (to
// run children as another user, and to own the private directory).
func startCheckCases(t *testing.T) []struct {
	name    string
	program string
	flags   []string
	want    int
} {
	t.Helper()
	requireRoot(t)
	script := func(dir, name, text string, mode os.FileMode) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		return path
	}
	shared := sharedTemp(t)
	private := filepath.Join(shared, "private")
	if err := os.Mkdir(private, 0o700); err != nil {
		t.Fatal(err)
	}
	notExec := script(shared, "notexec", "#!/bin/sh\nexit 0\n", 0o644)
	onlyRoot := script(shared, "onlyroot", "#!/bin/sh\nexit 0\n", 0o700)
	user := []string{"-user", "65534"}
	return []struct {
		name    string
		program string
		flags   []string
		want    int
	}{
		// Mode 0755, but its directory lets nobody else in: the kernel
		// refuses the child's execve with EACCES.
		{"in a private directory for -user", script(private, "run", "#!/bin/sh\nexit 0\n", 0o755), user, 126},
		// execve gives ENOENT for a missing interpreter, as for a
		// missing program: 127, as the stream child's start and docker
		// run say.
		{"interpreter missing", script(shared, "nointerp", "#!/nonexistent/interpreter\nexit 0\n", 0o755), nil, 127},
		{"interpreter missing, with an argument", script(shared, "nointerparg", "#! /nonexistent/env -S sh -e\nexit 0\n", 0o755), nil, 127},
		{"interpreter not executable", script(shared, "badinterp", "#!"+notExec+"\nexit 0\n", 0o755), nil, 126},
		{"interpreter not executable for -user", script(shared, "userinterp", "#!"+onlyRoot+"\nexit 0\n", 0o755), user, 126},
	}
}

// TestExecStartCheck (issue 26): in exec mode the start check is made for
// the child's user and follows a script's #! line: each program that
// cannot start ends the agent with 126 or 127 and one line naming it,
// before it makes anything in DIR: no FIFO is served, no status file
// says healthy.
func TestExecStartCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range startCheckCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			dir := t.TempDir()
			args := append([]string{"run", "-mode", "exec", "-dir", dir}, tc.flags...)
			code, stderr := runAgent(t, nil, append(args, "--", tc.program)...)
			if code != tc.want {
				t.Fatalf("run %q exited %d, want %d; stderr:\n%s", args, code, tc.want, stderr)
			}
			requireOneLine(t, "run", stderr)
			if !strings.Contains(stderr, tc.program) {
				t.Errorf("run's error does not name %s: %q", tc.program, stderr)
			}
			if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
				t.Errorf("the agent made %v in DIR (%v) for a program that cannot start", ents, err)
			}
		})
	}
}

// TestStreamStartCheck: the same programs as a stream child end the agent
// with the same codes, from the child's start.
func TestStreamStartCheck(t *testing.T) {
	t.Parallel()
	for _, tc := range startCheckCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			args := append([]string{"run", "-dir", filepath.Join(t.TempDir(), "fb")}, tc.flags...)
			code, stderr := runAgent(t, nil, append(args, "--", tc.program)...)
			if code != tc.want {
				t.Fatalf("run %q exited %d, want %d; stderr:\n%s", args, code, tc.want, stderr)
			}
			if !strings.Contains(stderr, tc.program) {
				t.Errorf("run's error does not name %s: %q", tc.program, stderr)
			}
		})
	}
}

// TestStartCheckKeepsAgentRoot: the start check for -user takes the
// child's ids on a thread of its own, never the agent's main thread, whose
// ids /proc/PID shows and the kernel checks for the whole agent. With it
// on the main thread the agent's own Uid was the child's, for good, and
// the child's user could reach the agent's /proc files.
func TestStartCheckKeepsAgentRoot(t *testing.T) {
	t.Parallel()
	requireRoot(t)
	for _, mode := range []string{"exec", "stream"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			a := startAgent(t, agentConfig{flags: []string{"-mode", mode, "-user", "65534"}, program: []string{"/bin/cat"}})
			a.waitStatus("running", func(s status) bool { return s.State == "running" })
			for key, want := range map[string]string{"Uid": "0 0 0 0", "Gid": "0 0 0 0"} {
				if got := procStatus(t, a.pid)[key]; got != want {
					t.Errorf("agent %s %q after the start check for -user 65534, want %q", key, got, want)
				}
			}
		})
	}
}
