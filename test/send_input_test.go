//go:build linux

package test

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSendAfterFragment (issue 8, finding 6): an unterminated fragment left
// in the input FIFO does not swallow the next send's request: send starts
// its write with a newline, so the fragment is a request of its own and
// send's output arrives on its reply.
func TestSendAfterFragment(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: []string{busybox, "cat"}})
	r := openReader(t, a.out)
	w := openWriter(t, a.in)
	w.write([]byte("fragment"))
	w.close()
	res := runSend(t, a.dir, nil, "-timeout", "5s", "hello")
	res.requireCode(t, 0)
	if string(res.stdout) != "hello\n" {
		t.Fatalf("send printed %q, want %q; stderr:\n%s", res.stdout, "hello\n", res.stderr)
	}
	// The fragment became a plain request of its own, answered on out.
	nextResponse(t, r).requireExit(t, 0, "fragment\n")
	requireNoReplies(t, a.dir)
}

// helperFlock: take an exclusive flock on descriptor 3, say "locked", and
// hold it until stdin ends.
func helperFlock([]string) int {
	if err := unix.Flock(3, unix.LOCK_EX); err != nil {
		return 1
	}
	os.Stdout.WriteString("locked\n")
	io.Copy(io.Discard, os.Stdin)
	return 0
}

// startLocker starts a process that holds an exclusive flock on the FIFO
// at path, as uid 65534 when the test runs as root, and returns the
// function that ends it.
func startLocker(t *testing.T, path string) (release func()) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(selfBin)
	if os.Geteuid() == 0 {
		// Another user's process; it runs a copy of the test binary it may
		// execute.
		bin := filepath.Join(worldDir(t), "locker")
		copyFile(t, selfBin, bin, 0o755)
		cmd = exec.Command(bin)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	}
	cmd.Env = append(agentEnv(t), helperEnv+"=flock")
	cmd.ExtraFiles = []*os.File{f}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start locker: %v", err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "locked\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("locker said %q (%v), want \"locked\"", line, err)
	}
	return func() { stdin.Close(); cmd.Wait() }
}

// worldDir returns a fresh directory every user may enter.
func worldDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "fifobridge-world-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSendLockRule (issue 9): whoever holds the flock on the input FIFO
// cannot stall a send. A request of at most PIPE_BUF bytes goes through
// without the lock; a larger one waits at most a second for it, then
// fails with 125; once the lock is free, it goes through.
func TestSendLockRule(t *testing.T) {
	t.Parallel()
	requireBusybox(t)
	checkLeaks(t, false)
	a := startAgent(t, agentConfig{flags: []string{"-mode", "exec"}, program: []string{busybox, "cat"}})
	waitServing(t, a)
	release := startLocker(t, a.in)
	defer release()

	// -timeout 5s: a send that waited for the lock would end with 124.
	res := runSend(t, a.dir, nil, "-timeout", "5s", "short")
	res.requireCode(t, 0)
	if string(res.stdout) != "short\n" {
		t.Fatalf("short send printed %q; stderr:\n%s", res.stdout, res.stderr)
	}
	large := append(bytes.Repeat([]byte("x"), 8000), '\n')
	res = runSend(t, a.dir, large, "-timeout", "5s")
	res.requireCode(t, 125)
	requireOneLine(t, "send", res.stderr)
	if !strings.Contains(res.stderr, "lock") {
		t.Fatalf("send's error does not name the lock: %q", res.stderr)
	}

	release()
	res = runSend(t, a.dir, large, "-timeout", "5s")
	res.requireCode(t, 0)
	if !bytes.Equal(res.stdout, large) {
		t.Fatalf("large send printed %d bytes, want %d; stderr:\n%s", len(res.stdout), len(large), res.stderr)
	}
	requireNoReplies(t, a.dir)
}
