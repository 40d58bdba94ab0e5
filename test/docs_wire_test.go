//go:build linux

package test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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

// TestDocsWireClient runs the Python client of docs/conversations.md
// ("The wire protocol, kept open") as written against python3 -i on
// pipes: several turns through its one reply FIFO, each answer as it
// should be, an error's traceback, the exit code of a child that ended,
// nothing asked after it; a second run is answered too, and no reply
// FIFO is left behind.
func TestDocsWireClient(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	code, line, err := docBlock("../docs/conversations.md", wireHeading, "python")
	if err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(t.TempDir(), "client.py")
	writeFile(t, script, code)
	a := startPython(t)
	a.ask("pass").requireAnswer(t, "") // the agent serves DIR/ask

	run := func(asks ...string) (int, string, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), hangTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, "python3", append([]string{script, a.dir}, asks...)...)
		cmd.Env = agentEnv(t)
		cmd.SysProcAttr = dieWithTest()
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if ctx.Err() != nil || (err != nil && !errors.As(err, &ee)) {
			t.Fatalf("docs/conversations.md:%d: the client did not end within %v: %v; stderr:\n%s", line, hangTimeout, err, stderr.String())
		}
		return exitCode(cmd.ProcessState), stdout.String(), stderr.String()
	}

	code2, stdout, stderr := run("x = 6", "print(x * 7)", "1/0", "print('é', end='')", "exit(3)", "print('never')")
	if code2 != 3 || !strings.HasPrefix(stdout, "42\nTraceback (most recent call last):\n") ||
		!strings.HasSuffix(stdout, "\nZeroDivisionError: division by zero\né") {
		t.Fatalf("docs/conversations.md:%d: the client exited %d with %q, want 3 with 42, the traceback and é; stderr:\n%s", line, code2, stdout, stderr)
	}
	code2, stdout, stderr = run("print('again')")
	if code2 != 0 || stdout != "again\n" {
		t.Fatalf("docs/conversations.md:%d: a second run exited %d with %q; stderr:\n%s", line, code2, stdout, stderr)
	}
	if ents, err := os.ReadDir(filepath.Join(a.dir, "replies")); err != nil || len(ents) > 0 {
		t.Fatalf("replies/ after the client: %v, %v", ents, err)
	}
}
