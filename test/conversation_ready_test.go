//go:build linux

package test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// The child is ready as soon as its prompt is followed by the reader of
// its input blocking on it (CONTRACT.md, "Conversations"): with a long
// -settle (an hour, ten seconds), only that can end a turn in the test.

// readyCase is a REPL or shell, on pipes or a terminal, and a question
// with its answer.
type readyCase struct {
	name     string
	flags    []string
	program  []string
	ask, ans string
}

func readyCases(t *testing.T) []readyCase {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Fatalf("bash is needed (CI installs it): %v", err)
	}
	requirePython(t)
	python := []string{"python3", "-i", "-q"}
	sh := []string{busybox, "PS1=$ ", "sh", "-i"}
	bashNorc := []string{busybox, "PS1=$ ", bash, "--norc", "--noprofile", "-i"}
	const py, shell = `print(6*7)`, `echo $((6*7))`
	pipes := []string{"-stderr", "out"}
	return []readyCase{
		{"python3 on pipes", append([]string{"-prompt", `^>>> $`, "-continuation", `^\.\.\. $`}, pipes...), python, py, "42\n"},
		{"python3 on a terminal", []string{"-tty", "-prompt", `^>>> $`, "-continuation", `^\.\.\. $`}, python, py, "42\n"},
		{"sh on pipes", append([]string{"-prompt", `^\$ $`}, pipes...), sh, shell, "42\n"},
		{"sh on a terminal", []string{"-tty", "-prompt", `^\$ $`}, sh, shell, "42\n"},
		{"bash on pipes", append([]string{"-prompt", `^\$ $`}, pipes...), bashNorc, shell, "42\n"},
		{"bash on a terminal", []string{"-tty", "-prompt", `^\$ $`}, bashNorc, shell, "42\n"},
	}
}

// rawTurn asks input on the wire and returns the answer and the end
// frame, reading each frame within d.
func rawTurn(t *testing.T, a *agent, id, input string, d time.Duration) (string, askFrame) {
	t.Helper()
	w := openWriter(t, a.dir+"/ask")
	defer w.close()
	q := newRawAsk(t, a, id)
	defer q.gone()
	w.writeLine(q.line(input))
	return q.answer(d)
}

// TestConversationReadyAtOnce: with -settle 1h, python3, sh and bash, on
// pipes and on a terminal, answer: their first prompt and each turn's end
// are taken when they are seen waiting for input, since a wait for the
// output to settle would outlast the test.
func TestConversationReadyAtOnce(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	for _, tc := range readyCases(t) {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			a := startAgent(t, agentConfig{flags: append([]string{"-settle", "1h"}, tc.flags...), program: tc.program})
			for i := range 2 {
				got, last := rawTurn(t, a, fmt.Sprintf("q%d", i), tc.ask, 30*time.Second)
				if got != tc.ans || last.Type != "end" || !last.Ready {
					t.Fatalf("ask %q: answer %q ending with %s, want %q at a prompt", tc.ask, got, last.line, tc.ans)
				}
			}
			a.stop()
			requireNoReplies(t, a.dir)
		})
	}
}

// TestConversationReadProbeOff: with FIFOBRIDGE_READ_PROBE=0 the turn
// waits -settle (the control of TestConversationReadyAtOnce).
func TestConversationReadProbeOff(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	requirePython(t)
	a := startAgent(t, agentConfig{env: []string{"FIFOBRIDGE_READ_PROBE=0"},
		flags:   []string{"-settle", "3s", "-prompt", `^>>> $`, "-stderr", "out"},
		program: []string{"python3", "-i", "-q"}})
	got, last := rawTurn(t, a, "q", "print(6*7)", 30*time.Second)
	if got != "42\n" || last.Type != "end" || last.DurationMS == nil || *last.DurationMS < 3000 {
		t.Fatalf("answer %q ending with %s, want 42 after -settle 3s", got, last.line)
	}
	a.stop()
	requireNoReplies(t, a.dir)
}

// TestConversationPromptWhileBusy: a line that looks like the prompt,
// written while the child does not read its input (it sleeps, then writes
// more), does not end the turn; nor do prompt-like lines in a long
// answer that the agent reads in pieces while the child already waits.
func TestConversationPromptWhileBusy(t *testing.T) {
	t.Parallel()
	checkLeaks(t, false)
	requirePython(t)
	for _, tc := range []struct{ name, flags string }{{"pipes", "-stderr out"}, {"terminal", "-tty"}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			flags := append([]string{"-settle", "10s", "-prompt", `^>>> $`}, strings.Fields(tc.flags)...)
			a := startAgent(t, agentConfig{flags: flags, program: []string{"python3", "-i", "-q"}})
			got, last := rawTurn(t, a, "sleep",
				"import sys, time; _ = sys.stdout.write('>>> '); sys.stdout.flush(); time.sleep(0.5); print('more')", 30*time.Second)
			if got != ">>> more\n" || last.Type != "end" || !last.Ready {
				t.Fatalf("answer %q ending with %s, want \">>> more\\n\" at the prompt after it", got, last.line)
			}
			// 100,000 lines of ">>> ": the agent's reads end on one of them
			// while python3 has written all and waits.
			want := strings.Repeat(">>> \n", 100000) + "\n"
			got, last = rawTurn(t, a, "long", `print('>>> \n' * 100000)`, 30*time.Second)
			if got != want || last.Type != "end" || !last.Ready {
				t.Fatalf("answer of %d bytes (want %d) ending with %s", len(got), len(want), last.line)
			}
			a.stop()
			requireNoReplies(t, a.dir)
		})
	}
}

// threadedReader is a Python program whose stdin is read by a thread of
// its own into a queue, as many programs read theirs: for each line the
// main thread prints "got LINE", a line that looks like its prompt,
// pauses 0.3 s, prints "more LINE" and its prompt again. Its reader
// thread sits in read(0) all the while.
const threadedReader = `
import queue, sys, threading, time
lines = queue.Queue()
def read():
    for line in sys.stdin:
        lines.put(line.strip())
threading.Thread(target=read, daemon=True).start()
out = sys.stdout
out.write("fb> "); out.flush()
while True:
    line = lines.get()
    out.write("got %s\nfb> " % line); out.flush()
    time.sleep(0.3)
    out.write("\nmore %s\nfb> " % line); out.flush()
`

// TestConversationThreadedReader (issue 32, item 3): a child whose input
// is read by a thread of its own is judged by -settle alone, since its
// reader blocks on its input while another thread still writes: a
// prompt-like line followed by a pause of 0.3 s does not end the turn,
// and each of 20 asks gets its own answer whole: five in a row to each of
// four agents at once, since each ask waits out -settle. The issue's
// -settle 1s becomes 3 s: on a busy machine python's pause of 0.3 s may
// take over a second, and would then rightly end the turn; the old probe
// ended it within 20 ms of the prompt, however long -settle.
func TestConversationThreadedReader(t *testing.T) {
	checkLeaks(t, false)
	t.Parallel()
	requirePython(t)
	for agent := range 4 {
		t.Run(fmt.Sprint(agent), func(t *testing.T) {
			t.Parallel()
			checkLeaks(t, false)
			a := startAgent(t, agentConfig{flags: []string{"-settle", "3s", "-prompt", `^fb> $`, "-stderr", "out"},
				program: []string{"python3", "-c", threadedReader}})
			for i := 5 * agent; i < 5*agent+5; i++ {
				q := fmt.Sprintf("q%d", i)
				want := fmt.Sprintf("got %s\nfb> \nmore %s\n", q, q)
				got, last := rawTurn(t, a, q, q, 30*time.Second)
				if got != want || last.Type != "end" || !last.Ready {
					t.Fatalf("ask %d: answer %q ending with %s, want %q at the prompt", i, got, last.line, want)
				}
			}
			a.stop()
			requireNoReplies(t, a.dir)
		})
	}
}
