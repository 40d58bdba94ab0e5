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
	"time"
)

// How long a README example may take (docker builds and go install take
// longer than the rest), and how much of its output a failure shows.
const (
	readmeTimeout     = time.Minute
	readmeSlowTimeout = 5 * time.Minute
	readmeOutputLimit = 64 << 10
)

// TestREADME runs every shell example of README.md as written (see
// readme_blocks_test.go for which blocks run and where), each as a
// script of its own with "sh -e", with the binary under test first on
// PATH, and requires exit 0 within a bounded time, nothing it started left
// running, no FIFO left in its temporary directories and no descriptor of
// this process more than before. Examples that run docker run where a
// Docker engine answers (required with FIFOBRIDGE_REQUIRE_PRIVILEGED=1),
// against images the test tags with the names the README uses, built from
// the binary under test.
func TestREADME(t *testing.T) {
	t.Parallel()
	blocks, err := readmeBlocks("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) == 0 {
		t.Fatal("README.md has no ```sh example")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	self, err := filepath.Abs(agentBin)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(self, filepath.Join(bin, "fifobridge")); err != nil {
		t.Fatal(err)
	}
	dk := newReadmeDocker(t, bin)
	for _, b := range blocks {
		t.Run(b.name(), func(t *testing.T) {
			checkLeaks(t, false)
			if b.docker() {
				dk.require(t)
			}
			runReadmeBlock(t, b, root, bin)
		})
	}
}

// runReadmeBlock runs one example in fresh temporary directories.
func runReadmeBlock(t *testing.T, b readmeBlock, root, bin string) {
	t.Helper()
	work, tmp := t.TempDir(), t.TempDir()
	script := filepath.Join(t.TempDir(), "example.sh")
	writeFile(t, script, b.script)
	env := readmeEnv(t, bin, tmp)
	timeout := readmeTimeout
	if b.inCheckout() {
		work, timeout = root, readmeSlowTimeout
		env = append(env, goEnvFor(t)...)
	}
	if b.docker() {
		timeout = readmeSlowTimeout
	}
	logPath := filepath.Join(t.TempDir(), "output")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-e", script)
	cmd.Dir, cmd.Env = work, env
	// Output goes to a file, not a pipe: a process the example left
	// holding its stdout must not hold the wait (checkLeaks reports it).
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	err = cmd.Run()
	log.Close()
	out, _ := os.ReadFile(logPath)
	if len(out) > readmeOutputLimit {
		out = out[len(out)-readmeOutputLimit:]
	}
	checkRace(t, "README example", string(out))
	switch {
	case ctx.Err() != nil:
		t.Errorf("README.md:%d: the example did not end within %v", b.line, timeout)
	case err != nil:
		t.Errorf("README.md:%d: the example failed: %v", b.line, err)
	}
	if fifos := fifosUnder(tmp); len(fifos) > 0 {
		t.Errorf("README.md:%d: the example left FIFOs behind: %v", b.line, fifos)
	}
	if t.Failed() || testing.Verbose() {
		t.Logf("README.md:%d, run in %s:\n%s\noutput:\n%s", b.line, work, b.script, out)
	}
}

// readmeEnv is the environment of an example: this process's, without
// FIFOBRIDGE_ variables (they would configure the agent) and with the
// test's marker, bin first on PATH and TMPDIR set to tmp.
func readmeEnv(t *testing.T, bin, tmp string) []string {
	var env []string
	for _, kv := range agentEnv(t) {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "PATH", "TMPDIR", "GOBIN", "GOPATH":
		default:
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "TMPDIR="+tmp)
}

// goEnvFor is the Go environment of an example run in the checkout: go
// install puts binaries into a GOPATH of the test's own, with the module
// cache that built the test (so nothing is downloaded) and no GOBIN.
func goEnvFor(t *testing.T) []string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Fatalf("go env GOMODCACHE: %v", err)
	}
	return []string{
		"GOPATH=" + t.TempDir(),
		"GOMODCACHE=" + strings.TrimSpace(string(out)),
		"GOPROXY=off",
		"GOTOOLCHAIN=local",
		"GOFLAGS=-mod=readonly",
	}
}
