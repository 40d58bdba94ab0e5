package turn

import (
	"regexp"
	"testing"
	"time"
)

// turnEnd is how a turn of a recording must end: its answer, whether at
// the prompt (ended) or the continuation prompt (incomplete) or neither
// (interrupted, or the child exited), and the prompt's status (-1: none).
type turnEnd struct {
	answer            string
	ended, incomplete bool
	status            int
}

func atPrompt(answer string, status int) turnEnd {
	return turnEnd{answer: answer, ended: true, status: status}
}

var wantsIncomplete = turnEnd{incomplete: true, status: -1}

// contWants is what python3 answers to record's contSteps, on pipes and
// on a terminal alike: incomplete inputs end at once, and the next turn
// gets its own answer.
func contWants() []turnEnd {
	return []turnEnd{
		atPrompt("42\n", -1),
		wantsIncomplete, // "for ...: print(i)" wants its block's end
		atPrompt("after\n", -1),
		atPrompt("0\n1\n2\n", -1), // "... ... " are the prompts for its later lines
		wantsIncomplete,           // the same block without its empty line
		atPrompt("", -1),          // "... " between its lines is no end
		atPrompt("(1, 2)\n", -1),
		atPrompt("42\n", -1), // an answer equal to its input is no echo
		{status: -1},
	}
}

// statusWants is what a shell with $? in its prompt answers to record's
// statusSteps; bash on pipes echoes its input, which the tracker learns
// in its first turn with output (turn 2): before, the echo stays.
func statusWants(bash bool) []turnEnd {
	w := []turnEnd{
		atPrompt("", 7),
		atPrompt("", 1),
		atPrompt("42\n", 0),
		atPrompt("", 0),
		atPrompt("ls: cannot access '/nonexistent-dir': No such file or directory\n", 2),
		atPrompt("yes\n", 0),
		atPrompt("a\nb\n", 0),
		wantsIncomplete,
		atPrompt("after\n", 0),
		atPrompt("x", 0), // "x[0] $ "
		atPrompt("dash: 14: 42: not found\n", 127),
		{status: -1},
	}
	if bash {
		w[0].answer, w[1].answer = "(exit 7)\n", "false\n"
		w[10].answer = "bash: 42: command not found\n"
		w[11].answer = "exit\n"
	}
	return w
}

// TestContinuationRecordings replays real children with a continuation
// prompt and a prompt that shows the last command's status.
func TestContinuationRecordings(t *testing.T) {
	const status = `^\[(?P<status>\d+)\] \$ $`
	for _, c := range []struct {
		name, rec, prompt, cont string
		tty                     bool
		echo                    EchoMode
		wants                   []turnEnd
	}{
		{name: "python-cont", prompt: `^>>> $`, cont: `^\.\.\. $`, wants: contWants()},
		{name: "python-cont-tty", prompt: `^>>> $`, cont: `^\.\.\. $`, tty: true, wants: contWants()},
		// The old recipe's prompt matches "... " too: the continuation wins.
		{name: "python-cont-both", rec: "python-cont", prompt: `^(>>>|\.\.\.) $`, cont: `^\.\.\. $`, wants: contWants()},
		{name: "dash-status", prompt: status, cont: `^> $`, wants: statusWants(false)},
		{name: "ash-status", prompt: status, cont: `^> $`, wants: ashStatusWants()},
		{name: "bash-pipe", prompt: status, cont: `^> $`, wants: statusWants(true)},
		{name: "bash-pipe-echo", rec: "bash-pipe", prompt: status, cont: `^> $`, echo: EchoOn, wants: bashEchoOn()},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec := c.rec
			if rec == "" {
				rec = c.name
			}
			r := newReplay(t, Config{Prompt: regexp.MustCompile(c.prompt), Continuation: regexp.MustCompile(c.cont),
				Terminal: c.tty, Echo: c.echo})
			r.play(loadRecording(t, rec), nil)
			if len(r.turns) != len(c.wants) {
				t.Fatalf("%d turns, want %d", len(r.turns), len(c.wants))
			}
			for i, w := range c.wants {
				got := r.turns[i]
				if got.answer.String() != w.answer || got.ended != w.ended || got.incomplete != w.incomplete || got.status != w.status {
					t.Errorf("turn %d %q: answer %q (ended %v, incomplete %v, status %d), want %q (%v, %v, %d)",
						i, got.input, got.answer.String(), got.ended, got.incomplete, got.status,
						w.answer, w.ended, w.incomplete, w.status)
				}
			}
		})
	}
}

// ashStatusWants: busybox ash words its errors its own way.
func ashStatusWants() []turnEnd {
	w := statusWants(false)
	w[4] = atPrompt("ls: /nonexistent-dir: No such file or directory\n", 1)
	w[10].answer = "sh: 42: not found\n"
	return w
}

// bashEchoOn: told that the child echoes, the tracker removes the echo
// from the first turn on.
func bashEchoOn() []turnEnd {
	w := statusWants(true)
	w[0].answer, w[1].answer = "", ""
	return w
}

// TestContinuationAfterInput: a continuation prompt after the whole input
// ends the turn as incomplete at once (after the settle period), not at
// the turn's time limit; the child is busy until its prompt comes back.
func TestContinuationAfterInput(t *testing.T) {
	c := python(t)
	tu := c.ask("for i in range(3): print(i)\n", 0)
	c.out("... ").after(DefaultSettle)
	if !tu.incomplete || tu.ended || c.tr.InTurn() || c.tr.Ready() {
		t.Fatalf("incomplete %v, ended %v, in turn %v, ready %v", tu.incomplete, tu.ended, c.tr.InTurn(), c.tr.Ready())
	}
	if _, ok := c.tr.Deadline(); ok {
		t.Error("a deadline after the turn ended, with no output since")
	}
	readies := c.tr.Readies()
	c.out("\nKeyboardInterrupt\n").settle()
	if c.tr.Ready() {
		t.Fatal("ready without a prompt after the interrupt")
	}
	c.out(">>> ").settle()
	if !c.tr.Ready() || c.tr.Readies() != readies+1 {
		t.Fatal("not ready at the prompt after the interrupt")
	}
	next := c.ask("print('after')\n", 0)
	c.out("after\n>>> ").settle()
	c.finish()
	if !next.ended || next.answer.String() != "after\n" {
		t.Errorf("next turn: answer %q (ended %v)", next.answer.String(), next.ended)
	}
	if got := c.other[Discarded].String(); got != "\nKeyboardInterrupt\n" {
		t.Errorf("discarded %q", got)
	}
	if got := c.other[Prompt].String(); got != ">>> ... >>> >>> " {
		t.Errorf("prompts %q", got)
	}
}

// TestContinuationBetweenLines: python3 on pipes shows a prompt for each
// later line of a multi-line input: those are no end, however long the
// block then runs; the continuation prompt after the last line is.
func TestContinuationBetweenLines(t *testing.T) {
	c := python(t)
	tu := c.ask("for i in range(3):\n    print(i)\n\n", 0)
	c.out("... ... ").settle()
	if tu.incomplete || tu.ended || !c.tr.InTurn() {
		t.Fatalf("a continuation prompt between lines ended the turn (incomplete %v, ended %v)", tu.incomplete, tu.ended)
	}
	c.out("0\n1\n2\n>>> ").settle()
	if !tu.ended || tu.answer.String() != "0\n1\n2\n" {
		t.Fatalf("answer %q (ended %v)", tu.answer.String(), tu.ended)
	}
	tu = c.ask("for i in range(3):\n    print(i)\n", 0) // no empty line: the block stays open
	c.out("... ").after(time.Millisecond).out("... ").settle()
	if !tu.incomplete {
		t.Fatalf("the block left open: incomplete %v, ended %v", tu.incomplete, tu.ended)
	}
	c.out("\nKeyboardInterrupt\n>>> ").settle()
	tu = c.ask("x = (1,\n2)\n", 0)
	c.out("... >>> ").settle()
	if !tu.ended || tu.answer.Len() != 0 {
		t.Errorf("a closed bracket: answer %q (ended %v, incomplete %v)", tu.answer.String(), tu.ended, tu.incomplete)
	}
	c.finish()
}

// TestContinuationWins: where the prompt expression matches the
// continuation prompt too (the old recipe '^(>>>|\.\.\.) $'), the
// continuation prompt is never taken for the prompt: not in a turn, and
// not outside one (typed input that opened a block).
func TestContinuationWins(t *testing.T) {
	c := newClockConfig(t, Config{Prompt: regexp.MustCompile(`^(>>>|\.\.\.) $`), Continuation: regexp.MustCompile(`^\.\.\. $`)})
	c.out(">>> ").settle()
	tu := c.ask("if True:\n", 0)
	c.out("... ").settle()
	if !tu.incomplete {
		t.Fatalf("incomplete %v, ended %v", tu.incomplete, tu.ended)
	}
	c.out("\nKeyboardInterrupt\n>>> ").settle()
	c.take(c.tr.Typed())
	c.out("... ").settle()
	if c.tr.Ready() {
		t.Fatal("ready at a continuation prompt outside a turn")
	}
	c.out("\n>>> ").settle()
	if !c.tr.Ready() {
		t.Fatal("not ready at the prompt")
	}
	c.finish()
}

// TestNoContinuation: without a continuation prompt, a line the prompt
// matches is a prompt wherever it comes, as before.
func TestNoContinuation(t *testing.T) {
	c := newClock(t, `^(>>>|\.\.\.) $`, false)
	c.out(">>> ").settle()
	tu := c.ask("for i in range(3): print(i)\n", 0)
	c.out("... ").settle()
	if !tu.ended || tu.incomplete || tu.answer.Len() != 0 {
		t.Errorf("answer %q (ended %v, incomplete %v)", tu.answer.String(), tu.ended, tu.incomplete)
	}
	c.finish()
}

// TestContinuationOnTerminal: on a terminal the echo of the input's later
// lines follows the continuation prompts; the one after the echo of the
// last line ends the turn as incomplete.
func TestContinuationOnTerminal(t *testing.T) {
	c := newClockConfig(t, Config{Prompt: regexp.MustCompile(`^>>> $`), Continuation: regexp.MustCompile(`^\.\.\. $`), Terminal: true})
	c.out(">>> ").settle()
	tu := c.ask("for i in range(2):\n    print(i)\n", 0)
	c.out("for i in range(2):\r\n... ").settle()
	if tu.incomplete || tu.ended {
		t.Fatal("a continuation prompt before the echo of the last line ended the turn")
	}
	c.out("    print(i)\r\n... ").settle()
	if !tu.incomplete || tu.answer.Len() != 0 {
		t.Fatalf("answer %q (incomplete %v)", tu.answer.String(), tu.incomplete)
	}
	c.finish()
}
