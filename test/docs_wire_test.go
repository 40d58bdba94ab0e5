//go:build linux

package test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// wireHeading is the section of docs/conversations.md whose Python
// client TestDocsWireClient runs.
const wireHeading = "The wire protocol, kept open"

// docBlock returns the first code block fenced as ```tag under the
// heading named heading in the Markdown file at path, and its line.
func docBlock(path, heading, tag string) (string, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	var (
		under, in bool
		block     strings.Builder
		start     int
	)
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case in && strings.TrimSpace(line) == "```":
			return block.String(), start, nil
		case in:
			block.WriteString(line + "\n")
		case strings.HasPrefix(line, "#"):
			under = strings.TrimSpace(strings.TrimLeft(line, "#")) == heading
		case under && strings.TrimSpace(line) == "```"+tag:
			in, start = true, n
		}
	}
	if err := sc.Err(); err != nil {
		return "", 0, err
	}
	if in {
		return "", 0, fmt.Errorf("%s:%d: code block not closed", path, start)
	}
	return "", 0, fmt.Errorf("%s: no ```%s block under %q", path, tag, heading)
}

// docsClient is the Python client of docs/conversations.md ("The wire
// protocol, kept open"), written to a file: run runs it with args.
type docsClient struct {
	t      *testing.T
	script string
	line   int // where the block starts in the docs, for messages
}

func newDocsClient(t *testing.T) docsClient {
	t.Helper()
	code, line, err := docBlock("../docs/conversations.md", wireHeading, "python")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "client.py")
	writeFile(t, script, code)
	return docsClient{t: t, script: script, line: line}
}

// run runs the client with args and returns its exit code, stdout and
// stderr; it must end within hangTimeout.
func (c docsClient) run(args ...string) (int, string, string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "python3", append([]string{c.script}, args...)...)
	cmd.Env = agentEnv(c.t)
	cmd.SysProcAttr = dieWithTest()
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if ctx.Err() != nil || (err != nil && !errors.As(err, &ee)) {
		c.t.Fatalf("docs/conversations.md:%d: the client did not end within %v: %v; stderr:\n%s", c.line, hangTimeout, err, stderr.String())
	}
	return exitCode(cmd.ProcessState), stdout.String(), stderr.String()
}

// TestDocsWireClient runs the Python client of docs/conversations.md
// ("The wire protocol, kept open") as written against python3 -i on
// pipes: several turns through its one reply FIFO, each answer as it
// should be, an error's traceback, the exit code of a child that ended,
// nothing asked after it; a second run is answered too, and no reply
// FIFO is left behind.
func TestDocsWireClient(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	c := newDocsClient(t)
	a := startPython(t)
	a.ask("pass").requireAnswer(t, "") // the agent serves DIR/ask

	code, stdout, stderr := c.run(a.dir, "x = 6", "print(x * 7)", "1/0", "print('é', end='')", "exit(3)", "print('never')")
	if code != 3 || !strings.HasPrefix(stdout, "42\nTraceback (most recent call last):\n") ||
		!strings.HasSuffix(stdout, "\nZeroDivisionError: division by zero\né") {
		t.Fatalf("docs/conversations.md:%d: the client exited %d with %q, want 3 with 42, the traceback and é; stderr:\n%s", c.line, code, stdout, stderr)
	}
	code, stdout, stderr = c.run(a.dir, "print('again')")
	if code != 0 || stdout != "again\n" {
		t.Fatalf("docs/conversations.md:%d: a second run exited %d with %q; stderr:\n%s", c.line, code, stdout, stderr)
	}
	if ents, err := os.ReadDir(filepath.Join(a.dir, "replies")); err != nil || len(ents) > 0 {
		t.Fatalf("replies/ after the client: %v, %v", ents, err)
	}
}

// TestDocsWireClientSession runs the same client with -session NAME
// against a session of python3 -i on pipes: its turns are answered there,
// twice; a session that is not open, one the status file does not list
// (a directory with an ask FIFO made by hand) and a name that could reach
// outside DIR/sessions are refused with 125, nothing written; no reply
// FIFO is left behind.
func TestDocsWireClientSession(t *testing.T) {
	checkLeaks(t, true)
	requirePython(t)
	c := newDocsClient(t)
	a := startSessions(t, []string{"-prompt", pythonPrompt, "-stderr", "out"}, []string{"python3", "-i", "-q"})
	a.mustOpen("py", nil)

	code, stdout, stderr := c.run(a.dir, "-session", "py", "x = 6", "print(x * 7)", "exit(3)", "print('never')")
	if code != 3 || stdout != "42\n" {
		t.Fatalf("docs/conversations.md:%d: the client exited %d with %q, want 3 with 42; stderr:\n%s", c.line, code, stdout, stderr)
	}
	a.mustOpen("py2", nil)
	code, stdout, stderr = c.run(a.dir, "-session", "py2", "print('again')")
	if code != 0 || stdout != "again\n" {
		t.Fatalf("docs/conversations.md:%d: a second run exited %d with %q; stderr:\n%s", c.line, code, stdout, stderr)
	}

	planted := filepath.Join(a.dir, "sessions", "planted")
	if err := os.Mkdir(planted, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mkfifo(filepath.Join(planted, "ask"), 0o600); err != nil {
		t.Fatal(err)
	}
	ask, err := os.OpenFile(filepath.Join(planted, "ask"), os.O_RDONLY|unix.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer ask.Close()
	for _, name := range []string{"none", "planted", "../sessions/py2", ".hidden"} {
		code, stdout, stderr = c.run(a.dir, "-session", name, "print(1)")
		if code != 125 || stdout != "" || !strings.Contains(stderr, "refused") {
			t.Fatalf("docs/conversations.md:%d: -session %s exited %d with %q, want 125 and nothing; stderr:\n%s", c.line, name, code, stdout, stderr)
		}
	}
	if n, err := ask.Read(make([]byte, 1)); n > 0 || !errors.Is(err, syscall.EAGAIN) && !errors.Is(err, io.EOF) {
		t.Fatalf("the planted ask FIFO was written to: %d, %v", n, err)
	}
	if ents, err := os.ReadDir(filepath.Join(a.dir, "replies")); err != nil || len(ents) > 0 {
		t.Fatalf("replies/ after the client: %v, %v", ents, err)
	}
}
