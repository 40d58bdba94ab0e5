//go:build linux

package test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// How a conversation's turn ended, as `ask` and the end frame tell it:
// an incomplete input (-continuation), the prompt's status, a child that
// was not ready; and the start warning of a prompt the agent cannot see.

// TestConversationIncomplete (issue 27, test 1): python3 on pipes with
// its continuation prompt given: an incomplete for gives 125 naming it,
// the child is interrupted back to its prompt, and the next ask answers
// alone; a complete block answers.
func TestConversationIncomplete(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	requirePython(t)
	a := startAgent(t, agentConfig{flags: []string{"-prompt", `^>>> $`, "-continuation", `^\.\.\. $`, "-stderr", "out"},
		program: []string{"python3", "-i", "-q"}})
	res := a.ask("for i in range(3): print(i)")
	if res.code != 125 || res.stdout != "" || !strings.Contains(res.stderr, "the input was incomplete") ||
		strings.Count(res.stderr, "\n") != 1 {
		t.Fatalf("an incomplete for: ask exited %d with %q, stderr %q; want 125 and one line naming it", res.code, res.stdout, res.stderr)
	}
	a.ask("print(6*7)").requireAnswer(t, "42\n")
	a.ask("for i in range(3):\n  print(i)\n\n").requireAnswer(t, "0\n1\n2\n")
	// The block's last line read, python3 still asks for its end: that
	// too is incomplete.
	if res := a.ask("for i in range(3):\n  print(i)"); res.code != 125 {
		t.Fatalf("a block without its empty line: ask exited %d with %q, %q; want 125", res.code, res.stdout, res.stderr)
	}
	// Seen on the wire.
	w := openWriter(t, filepath.Join(a.dir, "ask"))
	q := newRawAsk(t, a, "open")
	w.writeLine(q.line("x = (1,"))
	if got, last := q.answer(hangTimeout); got != "" || !last.Incomplete || last.Ready || last.TimedOut {
		t.Fatalf("an open parenthesis: answer %q ending with %s, want \"incomplete\":true", got, last.line)
	}
	q.gone()
	a.ask("print('after')").requireAnswer(t, "after\n")
	a.waitTurn("three incomplete turns", func(st turnStatus) bool {
		return st.Child.Turn.Incomplete == 3 && st.Child.Turn.Answered == 3
	})
	a.stop()
	requireNoReplies(t, a.dir)
}

// TestConversationShellStatus (issue 27, test 2): sh -i on pipes, with
// $? in its prompt and a -prompt whose group status matches it: ask exits
// with the command's status, and the end frame carries it; with the
// default -settle and with -settle 0, which takes the prompt at once.
func TestConversationShellStatus(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	for _, settle := range []string{"20ms", "0"} {
		t.Run("settle="+settle, func(t *testing.T) { testShellStatus(t, settle) })
	}
}

func testShellStatus(t *testing.T, settle string) {
	a := startAgent(t, agentConfig{flags: []string{"-prompt", `^\[(?P<status>\d+)\] \$ $`, "-stderr", "out", "-settle", settle},
		program: []string{busybox, "PS1=[$?] $ ", "sh", "-i"}})
	for _, tc := range []struct {
		cmd  string
		code int
	}{{"(exit 7)", 7}, {"false", 1}, {"true", 0}, {"ls /nonexistent 2>/dev/null", 2}} {
		if res := a.ask(tc.cmd); res.code != tc.code || res.stdout != "" {
			t.Fatalf("ask %q exited %d with %q, want %d; stderr:\n%s", tc.cmd, res.code, res.stdout, tc.code, res.stderr)
		}
	}
	a.ask("echo $((6*7))").requireAnswer(t, "42\n")

	w := openWriter(t, filepath.Join(a.dir, "ask"))
	q := newRawAsk(t, a, "seven")
	w.writeLine(q.line("(exit 7)"))
	_, last := q.answer(hangTimeout)
	if !last.Ready || !strings.Contains(last.line, `"status":7,`) || !strings.Contains(last.line, `"prompt":{"status":"7"}`) {
		t.Fatalf("the end frame of (exit 7) is %s, want \"status\":7 and \"prompt\":{\"status\":\"7\"}", last.line)
	}
	q.gone()
	a.stop()
	requireNoReplies(t, a.dir)
}

// TestConversationNotReady (issue 27, "a prompt that never comes"): an
// ask that times out while the child has shown no prompt since it started
// says so, naming the expression and quoting the child's last line.
func TestConversationNotReady(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	requirePython(t)
	a := startAgent(t, agentConfig{flags: []string{"-prompt", `^NEVER$`, "-stderr", "out"},
		program: []string{"python3", "-i", "-q"}})
	// The line quoted is the one shown last when the ask gives up: wait
	// until python3, however slow to start, has shown its prompt.
	a.waitUnready(">>> ")
	res := a.ask("-timeout", "1s", "print(1)")
	if res.code != 124 || !strings.Contains(res.stderr, `no prompt matching '^NEVER$' since it started`) ||
		!strings.Contains(res.stderr, `its last line is ">>> "`) || strings.Count(res.stderr, "\n") != 1 {
		t.Fatalf("ask -timeout 1s exited %d with stderr %q; want 124 and one line naming the prompt and the last line", res.code, res.stderr)
	}
	a.stop()
	requireNoReplies(t, a.dir)
}

// waitUnready waits until the status file says the child has shown no
// prompt since it started and quotes lastLine as its last line.
func (a *agent) waitUnready(lastLine string) {
	a.t.Helper()
	a.waitTurn(fmt.Sprintf("%q as the child's last line", lastLine), func(turnStatus) bool {
		var st struct {
			Child struct {
				Turn struct {
					Unready *struct {
						LastLine string `json:"last_line"`
					} `json:"unready"`
				} `json:"turn"`
			} `json:"child"`
		}
		b, err := os.ReadFile(a.status)
		return err == nil && json.Unmarshal(b, &st) == nil && st.Child.Turn.Unready != nil && st.Child.Turn.Unready.LastLine == lastLine
	})
}

// TestConversationNotReadyInterrupted: an ask interrupted (INT) while the
// child has shown no prompt since it started says so on its one line, as
// one past its limit does: the status file's turn carries it.
func TestConversationNotReadyInterrupted(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	requirePython(t)
	a := startAgent(t, agentConfig{flags: []string{"-prompt", `^NEVER$`, "-stderr", "out"},
		program: []string{"python3", "-i", "-q"}})
	a.waitUnready(">>> ")
	cmd, out := a.startAsk("-timeout", "60s", "print(1)")
	a.waitTurn("the ask queued", func(s turnStatus) bool { return s.Child.Turn.Queued == 1 })
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if code := exitCode(cmd.ProcessState); code != 130 || !strings.Contains(out.String(), `interrupted by SIGINT: the child has shown no prompt matching '^NEVER$' since it started`) ||
		!strings.Contains(out.String(), `its last line is ">>> "`) || strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("ask interrupted exited %d with %q; want 130 and one line naming the prompt and the last line", code, out.String())
	}
	a.stop()
	requireNoReplies(t, a.dir)
}

// TestConversationPromptUnseen: with -prompt on pipes and -stderr log the
// agent warns at start, once, that a prompt written to stderr cannot be
// seen; with -stderr out or -tty it does not.
func TestConversationPromptUnseen(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	const warning = "a prompt the child writes to its stderr cannot be seen"
	for _, tc := range []struct {
		flags []string
		warns bool
	}{
		{[]string{"-prompt", `^\$ $`}, true},
		{[]string{"-prompt", `^\$ $`, "-stderr", "out"}, false},
		{[]string{"-prompt", `^\$ $`, "-tty"}, false},
		{nil, false},
	} {
		a := startAgent(t, agentConfig{flags: tc.flags, program: []string{busybox, "sleep", "60"}})
		if !eventually(hangTimeout, func() bool { return strings.Contains(a.stderr(), "child started") }) {
			t.Fatalf("%q: the child never started; log:\n%s", tc.flags, a.stderr())
		}
		if n := strings.Count(a.stderr(), warning); n != map[bool]int{true: 1, false: 0}[tc.warns] {
			t.Errorf("%q: the warning is in the log %d times, want it %v; log:\n%s", tc.flags, n, tc.warns, a.stderr())
		}
		a.signal(syscall.SIGTERM)
		a.wait(hangTimeout)
	}
}
