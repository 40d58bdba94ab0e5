//go:build linux

package test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestDocsWatch runs the shell example of docs/watch.md as written, as
// TestREADME runs the README's: a watch of a session gets the session's
// output beside the reader of its out, and exits 0 when the session
// closes. It must exit 0, print what out had, the watch's exit and what
// the watch had, and leave no process, descriptor or FIFO behind.
func TestDocsWatch(t *testing.T) {
	checkLeaks(t, true)
	script, line, err := docBlock("../docs/watch.md", "Watch: follow a child's output", "sh")
	if err != nil {
		t.Fatal(err)
	}
	bin, tmp := t.TempDir(), t.TempDir()
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
	cmd.Dir, cmd.Env = t.TempDir(), readmeEnv(t, bin, tmp)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = hangTimeout
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	checkRace(t, "docs/watch.md example", stderr.String())
	if want := "got hello\nwatch exited 0\ngot hello\n"; ctx.Err() != nil || err != nil || string(out) != want {
		t.Fatalf("docs/watch.md:%d: the example ended with %v (%v); output %q, want %q; stderr:\n%s", line, err, ctx.Err(), out, want, stderr.String())
	}
	if fifos := fifosUnder(tmp); len(fifos) > 0 {
		t.Fatalf("docs/watch.md:%d: the example left FIFOs behind: %v", line, fifos)
	}
}
