//go:build linux

package test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
)

// sessionsWireHeading is the section of docs/sessions.md whose shell
// example TestDocsSessionsControl runs.
const sessionsWireHeading = "The control lines"

// TestDocsSessionsControl runs the shell example of docs/sessions.md
// ("The control lines") as written, as TestREADME runs the README's: it
// opens a session with a control line of its own on DIR/in and its own
// reply FIFO, streams through the session's FIFOs and closes it the same
// way. It must exit 0 (the agent's TERM exit included), print the opened
// frame, the line and the closed frame with cat's status, and leave no
// process, descriptor or FIFO behind.
func TestDocsSessionsControl(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	script, line, err := docBlock("../docs/sessions.md", sessionsWireHeading, "sh")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	out, stderr, err := runDocScript(t, script, tmp)
	checkRace(t, "docs/sessions.md example", stderr)
	want := regexp.MustCompile(`(?s)^\{"id":"o1","type":"opened","pid":\d+\}\nhello\n\{"id":"c1","type":"closed","code":143\}\n$`)
	if err != nil || !want.MatchString(out) {
		t.Fatalf("docs/sessions.md:%d: the example ended with %v; output %q, want the opened frame, hello and the closed frame (143: TERM ended cat); stderr:\n%s", line, err, out, stderr)
	}
	if fifos := fifosUnder(tmp); len(fifos) > 0 {
		t.Fatalf("docs/sessions.md:%d: the example left FIFOs behind: %v", line, fifos)
	}
}

// runDocScript runs script, a doc's shell example, as TestREADME runs the
// README's: with "sh -e" in a fresh directory, the binary under test first
// on PATH, TMPDIR set to tmp and env added, within readmeTimeout. It
// returns what the script wrote on stdout and stderr, and an error when
// it failed or did not end in time (its process group is killed then).
func runDocScript(t *testing.T, script, tmp string, env ...string) (string, string, error) {
	t.Helper()
	bin := t.TempDir()
	self, err := filepath.Abs(agentBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(bin, "fifobridge")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "example.sh")
	writeFile(t, path, script)
	ctx, cancel := context.WithTimeout(context.Background(), readmeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-e", path)
	cmd.Dir, cmd.Env = t.TempDir(), append(readmeEnv(t, bin, tmp), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = hangTimeout
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return string(out), stderr.String(), err
}
