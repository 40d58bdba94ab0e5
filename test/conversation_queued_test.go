//go:build linux

package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// What a failed ask says when it never reached the child: one that gave
// up while queued behind another turn, and one queued behind a child
// that keeps an incomplete input (sqlite3).

// queuedLine is what ask's line says of an ask that gave up while queued.
const queuedLine = "the ask gave up while queued, so nothing was sent to the child and no turn was interrupted for it"

// TestConversationQueuedGiveUp (issue 32, "5. The queued ask's message."):
// an ask whose -timeout comes while it waits behind another turn exits
// 124, and one interrupted there by INT or TERM 130 or 143, each with one
// line saying it gave up while queued and nothing was sent, not that the
// child was interrupted; the agent logs why it waited. Nothing of them
// reaches the child, and no turn is interrupted for them: the turn ahead
// ends at its prompt with its whole answer.
func TestConversationQueuedGiveUp(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	a := startPython(t)
	a.ask("print(1)").requireAnswer(t, "1\n")
	marks := t.TempDir()
	// Each queued ask's input would make a file of its own, were it ever
	// written to the child.
	sent := func(name string) string { return fmt.Sprintf("open(%q, 'w').close()", filepath.Join(marks, name)) }

	begun, release := filepath.Join(marks, "begun"), filepath.Join(marks, "release")
	ahead, aheadOut := a.startAsk("-timeout", "60s",
		fmt.Sprintf("open(%q, 'w').close(); ", begun)+holdTurn(release, "print('the turn ahead, ' + 'whole')"))
	if !eventually(hangTimeout, func() bool { _, err := os.Stat(begun); return err == nil }) {
		t.Fatal("the turn ahead never began")
	}

	res := a.ask("-timeout", "1s", sent("timeout"))
	if want := "fifobridge ask: timed out after 1s: " + queuedLine + "\n"; res.code != 124 || res.stdout != "" || res.stderr != want {
		t.Errorf("ask -timeout 1s behind a turn exited %d with %q, stderr %q; want 124 and %q", res.code, res.stdout, res.stderr, want)
	}
	for i, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd, out := a.startAsk("-timeout", "60s", sent(fmt.Sprint(sig)))
		// Counted with the timed-out one: not a status from before it.
		a.waitTurn("the ask queued", func(s turnStatus) bool { return s.Child.Turn.Queued == i+1 && s.Child.Turn.TimedOut == 1 })
		if err := cmd.Process.Signal(sig); err != nil {
			t.Fatal(err)
		}
		cmd.Wait()
		want := fmt.Sprintf("fifobridge ask: interrupted by SIG%s: %s\n", map[syscall.Signal]string{syscall.SIGINT: "INT", syscall.SIGTERM: "TERM"}[sig], queuedLine)
		if code := exitCode(cmd.ProcessState); code != 128+int(sig) || out.String() != want {
			t.Errorf("ask queued behind a turn, sent %v: exit %d with %q; want %d and %q", sig, code, out.String(), 128+int(sig), want)
		}
	}

	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	ahead.Wait()
	if code := exitCode(ahead.ProcessState); code != 0 || aheadOut.String() != "the turn ahead, whole\n" {
		t.Errorf("the turn ahead exited %d with %q; want 0 and its whole answer", code, aheadOut.String())
	}
	// The interrupted asks are dropped at their turn, before this one.
	a.ask("print('after')").requireAnswer(t, "after\n")
	for _, name := range []string{"timeout", fmt.Sprint(syscall.SIGINT), fmt.Sprint(syscall.SIGTERM)} {
		if _, err := os.Stat(filepath.Join(marks, name)); !os.IsNotExist(err) {
			t.Errorf("the ask given up while queued (%s) reached the child: %v", name, err)
		}
	}
	a.waitTurn("three answered, one timed out", func(s turnStatus) bool {
		return s.Child.Turn.Answered == 3 && s.Child.Turn.TimedOut == 1 && s.Child.Turn.Queued == 0
	})
	log := a.stderr()
	if !strings.Contains(log, `msg="ask gave up while queued: nothing was sent to the child"`) ||
		!strings.Contains(log, `why="the turn ahead of it was still running"`) {
		t.Errorf("the agent's log does not say why the ask waited:\n%s", log)
	}
	if strings.Contains(log, "turn interrupted") {
		t.Errorf("a turn was interrupted for a queued ask:\n%s", log)
	}
	a.stop()
	requireNoReplies(t, a.dir)
}

// requireSqlite fails t without sqlite3, which CI installs.
func requireSqlite(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Fatalf("sqlite3 is needed (CI installs it): %v", err)
	}
}

// TestConversationSqliteKeepsInput (issue 32, item 9): the README's
// sqlite3 recipe. With -continuation, `select 1` without its `;` is
// incomplete (125); sqlite3 keeps the statement through the interrupt
// and shows no prompt, so a later ask gives up while queued (124) with a
// line that names the incomplete input and fifobridge type; the rest
// typed into DIR/in (what fifobridge type does) finishes it, and the next
// ask is answered alone.
func TestConversationSqliteKeepsInput(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	requireSqlite(t)
	a := startAgent(t, agentConfig{flags: []string{"-tty", "-prompt", `^sqlite> $`, "-continuation", `^   \.\.\.> $`},
		program: []string{"sqlite3"}})
	a.ask("create table t(n); insert into t values (6 * 7);").requireAnswer(t, "")
	res := a.ask("select 1")
	if res.code != 125 || res.stdout != "" || !strings.Contains(res.stderr, "the input was incomplete") {
		t.Fatalf("ask 'select 1' exited %d with %q, stderr %q; want 125 naming an incomplete input", res.code, res.stdout, res.stderr)
	}
	for range 2 { // every later ask says so
		res = a.ask("-timeout", "1s", "select n from t;")
		if res.code != 124 || res.stdout != "" || strings.Count(res.stderr, "\n") != 1 ||
			!strings.Contains(res.stderr, `the input of the turn before, "select 1", was incomplete`) ||
			!strings.Contains(res.stderr, "finish it with fifobridge type") || !strings.Contains(res.stderr, queuedLine) {
			t.Fatalf("ask after the incomplete one exited %d with %q, stderr %q; want 124 and one line naming \"select 1\" and fifobridge type",
				res.code, res.stdout, res.stderr)
		}
	}
	in := openWriter(t, a.in)
	in.writeLine(";")
	in.close()
	a.ask("select n + 1 from t;").requireAnswer(t, "43\n")
	a.stop()
	requireNoReplies(t, a.dir)
}
