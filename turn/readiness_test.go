package turn

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSettleAtPrompt: AtPrompt says when the current line is the prompt
// the settle period would take; Settle takes it at once, ending the turn.
func TestSettleAtPrompt(t *testing.T) {
	c := newClock(t, `^>>> $`, false)
	if c.tr.AtPrompt() {
		t.Fatal("AtPrompt with no output")
	}
	c.out(">>").after(time.Millisecond)
	if c.tr.AtPrompt() {
		t.Fatal("AtPrompt at half a prompt")
	}
	c.out("> ")
	if !c.tr.AtPrompt() || c.tr.Ready() {
		t.Fatalf("AtPrompt %v, ready %v at the first prompt", c.tr.AtPrompt(), c.tr.Ready())
	}
	c.take(c.tr.Settle(c.now))
	if !c.tr.Ready() || c.tr.AtPrompt() {
		t.Fatalf("after Settle: ready %v, AtPrompt %v", c.tr.Ready(), c.tr.AtPrompt())
	}
	tu := c.ask("print(6*7)\n", 0)
	c.out("42\n")
	if c.tr.AtPrompt() {
		t.Fatal("AtPrompt after an answer line")
	}
	c.take(c.tr.Settle(c.now)) // the reader is seen blocked too early: nothing to take
	if tu.ended || !c.tr.InTurn() {
		t.Fatal("Settle ended a turn with no prompt shown")
	}
	c.out(">>> ")
	c.take(c.tr.Settle(c.now))
	if !tu.ended || tu.answer.String() != "42\n" {
		t.Fatalf("answer %q (ended %v)", tu.answer.String(), tu.ended)
	}
	c.finish()
}

// TestSettleWaitsForEcho: on a terminal the prompt is not taken while the
// echo of the input's later lines is still to come, however it is asked.
func TestSettleWaitsForEcho(t *testing.T) {
	c := newClock(t, `^(>>>|\.\.\.) $`, true)
	c.out(">>> ").settle()
	tu := c.ask("if 1:\n  2\n\n", 0)
	c.out("if 1:\r\n... ")
	if c.tr.AtPrompt() {
		t.Fatal("AtPrompt with the echo of later lines still to come")
	}
	c.take(c.tr.Settle(c.now))
	if tu.ended {
		t.Fatal("Settle ended the turn before the echo was complete")
	}
	c.out("  2\r\n... \r\n2\r\n>>> ")
	if !c.tr.AtPrompt() {
		t.Fatal("not AtPrompt at the prompt")
	}
	c.take(c.tr.Settle(c.now))
	if !tu.ended || tu.answer.String() != "2\n" {
		t.Errorf("answer %q (ended %v)", tu.answer.String(), tu.ended)
	}
	c.finish()
}

// TestSettleIncomplete: AtPrompt holds at a continuation prompt after the
// whole input, and Settle ends the turn as incomplete.
func TestSettleIncomplete(t *testing.T) {
	c := python(t)
	tu := c.ask("while True:\n", 0)
	c.out("... ")
	if !c.tr.AtPrompt() {
		t.Fatal("not AtPrompt at the continuation prompt after the input")
	}
	c.take(c.tr.Settle(c.now))
	if !tu.incomplete || c.tr.AtPrompt() {
		t.Fatalf("incomplete %v, AtPrompt %v", tu.incomplete, c.tr.AtPrompt())
	}
	c.finish()
}

// TestSettleAtOnce: with SettleAtOnce (run -settle 0) the prompt is due
// the moment it is shown; output that comes at that same moment is read
// first.
func TestSettleAtOnce(t *testing.T) {
	c := newClockConfig(t, Config{Prompt: regexp.MustCompile(`^\$ $`), Settle: SettleAtOnce})
	c.out("$ ")
	if d, ok := c.tr.Deadline(); !ok || !d.Equal(c.now) {
		t.Fatalf("deadline %v %v, want the output's time", d, ok)
	}
	more := []byte("more\n$ ") // the same moment, no Tick between
	c.fed.Write(more)
	c.take(c.tr.Output(more, c.now))
	c.after(0)
	if !c.tr.Ready() {
		t.Fatal("not ready at once")
	}
	c.finish()
	if got := c.other[Discarded].String(); got != "$ more\n" {
		t.Errorf("discarded %q: the first prompt was taken before output of the same moment", got)
	}
}

// TestLastLine: the child's last line without escapes, for naming a child
// that shows no prompt.
func TestLastLine(t *testing.T) {
	c := newClock(t, `^>>> $`, true)
	if got := string(c.tr.LastLine()); got != "" {
		t.Errorf("last line %q with no output", got)
	}
	c.out("Welcome\r\n\x1b[1mroot@host\x1b[0m:/# ")
	if got := string(c.tr.LastLine()); got != "root@host:/# " {
		t.Errorf("last line %q", got)
	}
	c.out("\r\n").settle()
	if got := string(c.tr.LastLine()); got != "root@host:/# " {
		t.Errorf("last line %q after its newline", got)
	}
	c.out(">>> ").settle()
	if got := string(c.tr.LastLine()); got != ">>> " || !c.tr.Ready() {
		t.Errorf("last line %q once ready (%v)", got, c.tr.Ready())
	}
	long := strings.Repeat("é", 100) // 200 bytes: cut to 80 at a character
	c.out(long)
	if got := string(c.tr.LastLine()); got != strings.Repeat("é", 40) {
		t.Errorf("last line %q of a long line", got)
	}
	c.out("x")
	if got := string(c.tr.LastLine()); got != strings.Repeat("é", 39)+"x" {
		t.Errorf("last line %q: not cut at a character", got)
	}
	c.out(strings.Repeat("y", 2*MaxHold) + "\n")
	if got := string(c.tr.LastLine()); got != strings.Repeat("y", MaxLastLine) {
		t.Errorf("last line %q after a line longer than MaxHold", got)
	}
	c.finish()
}

// TestReadies: the count of readies tells a caller whether the child has
// been ready since its start, or since a turn it interrupted.
func TestReadies(t *testing.T) {
	c := newClock(t, `^>>> $`, false)
	c.out("Python\n").settle()
	if c.tr.Readies() != 0 {
		t.Fatal("ready before the first prompt")
	}
	c.out(">>> ").settle()
	c.ask("loop()\n", 0)
	at := c.tr.Readies()
	c.take(c.tr.Abandon())
	c.out("still\n").settle()
	if c.tr.Readies() != at {
		t.Fatal("a ready counted without a prompt")
	}
	c.out(">>> ").settle()
	if c.tr.Readies() != at+1 {
		t.Fatal("the prompt after the interrupt not counted")
	}
	c.finish()
}

// TestReadyEvent: Config.Ready is told at each ready, as Readies counts
// them, from within the call that made the child ready.
func TestReadyEvent(t *testing.T) {
	told := 0
	c := newClockConfig(t, Config{Prompt: regexp.MustCompile(`^>>> $`), Ready: func() { told++ }})
	c.out("Python\n").settle()
	if told != 0 {
		t.Fatal("told before the first prompt")
	}
	c.out(">>> ").settle()
	if told != 1 || c.tr.Readies() != 1 {
		t.Fatalf("told %d times, %d readies, at the first prompt", told, c.tr.Readies())
	}
	c.ask("1\n", 0)
	c.out("1\n>>> ").settle()
	if told != 2 || c.tr.Readies() != 2 {
		t.Fatalf("told %d times, %d readies, after a turn", told, c.tr.Readies())
	}
	c.finish()
}
