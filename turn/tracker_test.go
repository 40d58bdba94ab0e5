package turn

import (
	"bytes"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fifobridge/fifobridge/internal/ttytext"
)

func TestNew(t *testing.T) {
	if _, err := New(Config{}); !errors.Is(err, ErrNoPrompt) {
		t.Errorf("New without a prompt: %v, want ErrNoPrompt", err)
	}
	tr, err := New(Config{Prompt: regexp.MustCompile("x")})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Ready() || tr.InTurn() || tr.Closed() {
		t.Error("a new tracker is not busy")
	}
	if _, ok := tr.Deadline(); ok {
		t.Error("a new tracker with no output has a deadline")
	}
}

func TestLine(t *testing.T) {
	for in, want := range map[string]string{"": "\n", "a": "a\n", "a\n": "a\n", "a\nb": "a\nb\n"} {
		if got := string(Line([]byte(in))); got != want {
			t.Errorf("Line(%q) = %q, want %q", in, got, want)
		}
	}
	in := make([]byte, 1, 8)
	in[0] = 'a'
	_ = Line(in)
	if in[:2][1] == '\n' {
		t.Error("Line wrote into its argument's spare capacity")
	}
}

func TestKindString(t *testing.T) {
	if Answer.String() != "answer" || End.String() != "end" || Kind(99).String() != "kind(99)" {
		t.Errorf("names: %v %v %v", Answer, End, Kind(99))
	}
}

// TestPromptOnlyAfterQuiet: the last line is the prompt only once the
// output has stopped for the quiet period; a prompt-like line followed by
// more output within it is answer.
func TestPromptOnlyAfterQuiet(t *testing.T) {
	c := newClock(t, `^>>> $`, false)
	c.out(">>> ")
	if d, ok := c.tr.Deadline(); !ok || !d.Equal(c.now.Add(DefaultSettle)) {
		t.Fatalf("deadline %v %v, want the quiet period from the output", d, ok)
	}
	c.after(DefaultSettle - time.Nanosecond)
	if c.tr.Ready() {
		t.Fatal("ready before the quiet period")
	}
	c.after(time.Nanosecond)
	if !c.tr.Ready() {
		t.Fatal("not ready after the quiet period")
	}
	tu := c.ask("x\n", 0)
	c.after(time.Millisecond).out(">>> ").after(DefaultSettle / 2).out("more\n>>> ")
	if c.tr.Ready() || tu.ended {
		t.Fatal("a prompt-like line followed by more output ended the turn")
	}
	c.after(DefaultSettle)
	if !tu.ended || tu.answer.String() != ">>> more\n" {
		t.Errorf("answer %q (ended %v), want \">>> more\\n\"", tu.answer.String(), tu.ended)
	}
	c.finish()
}

// TestLateTick: a caller whose timer fires late still gets the prompt
// before the output that came after the quiet period.
func TestLateTick(t *testing.T) {
	c := newClock(t, `^\$ $`, false)
	c.out("$ ")
	c.now = c.now.Add(time.Second) // no Tick
	c.out("tick\n")
	if !c.tr.Ready() {
		t.Fatal("not ready")
	}
	c.finish()
	if got := c.other[Prompt].String(); got != "$ " {
		t.Errorf("prompt %q", got)
	}
	if got := c.other[Discarded].String(); got != "tick\n" {
		t.Errorf("discarded %q", got)
	}
}

// TestNotFresh: after input, only new output can show the prompt: an
// empty last line matching an empty prompt does not end a turn at once.
func TestNotFresh(t *testing.T) {
	c := newClock(t, `^$`, false)
	c.out("hello\n").settle()
	if !c.tr.Ready() {
		t.Fatal("not ready")
	}
	tu := c.ask("slow\n", 0)
	c.settle()
	if tu.ended {
		t.Fatal("a turn ended with no output")
	}
	c.out("done\n").settle()
	if !tu.ended || tu.answer.String() != "done\n" {
		t.Errorf("answer %q (ended %v)", tu.answer.String(), tu.ended)
	}
	c.finish()
}

func TestEchoOnTerminal(t *testing.T) {
	for _, c := range []struct {
		name, input string
		chunks      []string
		answer      string
	}{
		{"plain", "print(1)\n", []string{"print(1)\r\n1\r\n>>> "}, "1\n"},
		{"split", "print(1)\n", []string{"pri", "nt(1)", "\r", "\n1", "\r\n>", ">> "}, "1\n"},
		{"control characters", "a\x01b\n", []string{"a^Ab\r\nok\r\n>>> "}, "ok\n"},
		{"readline continuation", "if x:\n  y\n\n", []string{"if x:\r\n... ", "  y\r\n... \r\n", "out\r\n>>> "}, "out\n"},
		{"canonical all at once", "a\nb\n", []string{"a\r\nb\r\n", "A\r\n>>> B\r\n>>> "}, "A\nB\n"},
		{"answer between echoes", "a\nb\n", []string{"a\r\n", "A\r\n>>> b\r\nB\r\n>>> "}, "A\nB\n"},
		{"wrapped", "echo " + longWord + "\n", []string{"echo " + longWord[:70] + "\r\r\n" + longWord[70:] + "\r\n" + longWord + "\r\n>>> "}, longWord + "\n"},
		{"scrolled", "echo " + longWord + "\n", []string{"\r<" + longWord[40:] + "\r\n" + longWord + "\r\n>>> "}, longWord + "\n"},
		{"bracketed paste", "x\n", []string{"x\r\n\x1b[?2004l\r", "X\r\n\x1b[?2004h>>> "}, "X\n"},
		{"no echo (stty -echo)", "x\n", []string{"X\r\n>>> "}, "X\n"},
		{"no echo, answer like the input later", "x\n", []string{"X\r\nx\r\n>>> "}, "X\nx\n"},
		{"echo refuted half way", "abc\n", []string{"abd\r\n>>> "}, "abd\n"},
		{"input without newline", "abc", []string{"abc\r\n>>> "}, "abc\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newClock(t, `^(>>>|\.\.\.) $`, true)
			r.out(">>> ").settle()
			tu := r.ask(c.input, 0)
			for _, ch := range c.chunks {
				r.after(time.Millisecond).out(ch)
			}
			r.settle()
			if !tu.ended || tu.answer.String() != c.answer {
				t.Errorf("answer %q (ended %v), want %q; echo %q", tu.answer.String(), tu.ended, c.answer, tu.echo.String())
			}
			r.finish()
		})
	}
}

// TestNoEchoOnPipes: on pipes output that looks like the input is answer.
func TestNoEchoOnPipes(t *testing.T) {
	c := newClock(t, `^>>> $`, false)
	c.out(">>> ").settle()
	tu := c.ask("2\n", 0)
	c.out("2\n>>> ").settle()
	if tu.answer.String() != "2\n" {
		t.Errorf("answer %q, want \"2\\n\"", tu.answer.String())
	}
	c.finish()
}

// TestEchoAfterContinuationPrompt: the echo of a later input line follows
// the child's continuation prompt, which the prompt expression need not
// match; the turn still ends at the prompt, and that line is not answer.
func TestEchoAfterContinuationPrompt(t *testing.T) {
	for _, c := range []struct {
		name, prompt, input string
		chunks              []string
		answer              string
	}{
		{"python", `^>>> $`, "x = (1,\n2)\n", []string{"x = (1,\r\n", "... ", "2)\r\n>>> "}, ""},
		{"python block", `^>>> $`, "for i in 'ab':\n    print(i)\n\n",
			[]string{"for i in 'ab':\r\n", "... ", "    print(i)\r\n... \r\na\r\nb\r\n>>> "}, "a\nb\n"},
		{"sqlite", `^sqlite> $`, "select 1,\n2;\n", []string{"select 1,\r\n", "   ...> ", "2;\r\n1|2\r\nsqlite> "}, "1|2\n"},
		{"answer ending like the input", `^>>> $`, "a\nb\n", []string{"a\r\n", "Ab\r\n>>> b\r\nB\r\n>>> "}, "Ab\nB\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newClock(t, c.prompt, true)
			r.out(c.prompt[1 : len(c.prompt)-1]).settle()
			tu := r.ask(c.input, 0)
			for _, ch := range c.chunks {
				r.after(time.Millisecond).out(ch)
			}
			r.settle()
			if !tu.ended || tu.answer.String() != c.answer {
				t.Errorf("answer %q (ended %v), want %q; echo %q", tu.answer.String(), tu.ended, c.answer, tu.echo.String())
			}
			r.finish()
		})
	}
}

// TestPromptEndsLine: output that does not end its line puts the prompt
// after it ("x>>> " after print("x", end="")); the end of the line that
// the prompt matches is the prompt, the rest answer. A line that only
// looks like that, with more before the quiet period, is answer.
func TestPromptEndsLine(t *testing.T) {
	long := strings.Repeat("y", 200) // longer than the 64 bytes once looked at
	for _, c := range []struct {
		name, input string
		tty         bool
		chunks      []string
		answer      string
		ended       bool
	}{
		{"pipes", "print('x', end='')\n", false, []string{"x>>> "}, "x", true},
		{"terminal", "print('x', end='')\n", true, []string{"print('x', end='')\r\n", "x\x1b[?2004h>>> "}, "x", true},
		{"carriage return", "p\n", false, []string{"50%\r>>> "}, "50%", true},
		{"long line", "p\n", false, []string{long + ">>> "}, long, true},
		{"more before quiet", "p\n", false, []string{"x>>> ", "more\n>>> "}, "x>>> more\n", true},
		{"not the prompt", "p\n", false, []string{"x>> "}, "x>> ", false}, // handed on once quiet (flush.go)
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newClock(t, `^>>> $`, c.tty)
			r.out(">>> ").settle()
			tu := r.ask(c.input, 0)
			for _, ch := range c.chunks {
				r.after(time.Millisecond).out(ch)
			}
			r.settle()
			if tu.ended != c.ended || tu.answer.String() != c.answer {
				t.Errorf("answer %q (ended %v), want %q (ended %v)", tu.answer.String(), tu.ended, c.answer, c.ended)
			}
			if !c.ended {
				r.eof(r.now) // hands back what is held
			}
			r.finish()
		})
	}
	r := newClock(t, `^>>> $`, false) // a new child's banner
	r.out("Welcome>>> ").settle()
	if !r.tr.Ready() {
		t.Error("not ready at a prompt after a banner")
	}
	r.finish()
}

// TestEchoHoldsReadiness: a prompt shown while the echo of later input
// lines is still to come is not the end of the turn, however quiet.
func TestEchoHoldsReadiness(t *testing.T) {
	c := newClock(t, `^(>>>|\.\.\.) $`, true)
	c.out(">>> ").settle()
	tu := c.ask("import time\ntime.sleep(1)\n", 0)
	c.out("import time\r\n>>> ").settle()
	if tu.ended {
		t.Fatal("the turn ended before the child read all its input")
	}
	c.out("time.sleep(1)\r\n").settle().out(">>> ").settle()
	if !tu.ended || tu.answer.String() != "" {
		t.Errorf("answer %q (ended %v)", tu.answer.String(), tu.ended)
	}
	c.finish()
}

func TestCarriageReturns(t *testing.T) {
	for _, c := range []struct{ out, answer string }{
		{"a\r\nb\r\n", "a\nb\n"},
		{"a\r\r\nb\r\n", "a\nb\n"},           // printf's "\r\n" through a terminal
		{"\ra\r\n", "a\n"},                   // at a line's start
		{"\x1b[?2004l\ra\r\n", "a\n"},        // after an escape sequence at a line's start
		{"10%\r20%\r\n", "10%\r20%\n"},       // a progress line keeps its own
		{"a\r\x1b[K\r\n", "a\n"},             // through an escape sequence
		{"a\r\x1b[Kb\r\n", "a\rb\n"},         // text follows
		{"x\r\n\r\n\r\ny\r\n", "x\n\n\ny\n"}, // empty lines
		{"a\rb\rc", "a\rb\rc"},               // the turn ends without "\n"
	} {
		r := newClock(t, `^\$ $`, true)
		r.out("$ ").settle()
		tu := r.ask("cmd\n", 50*time.Millisecond)
		r.out("cmd\r\n")
		for i := range len(c.out) { // one byte at a time
			r.out(c.out[i : i+1])
		}
		r.settle()
		if tu.answer.String() != c.answer {
			t.Errorf("%q: answer %q, want %q", c.out, tu.answer.String(), c.answer)
		}
		r.finish()
	}
}

func TestEscapes(t *testing.T) {
	for _, c := range []struct{ out, answer string }{
		{"\x1b[1mbold\x1b[0m\n", "bold\n"},
		{"\x1b[38;5;196mred\x1b[m\n", "red\n"},
		{"\x1b]0;title\x07text\n", "text\n"},                                    // OSC ended by BEL
		{"\x1b]8;;http://x\x1b\\link\x1b]8;;\x1b\\\n", "link\n"},                // OSC ended by ST
		{"\x1bP+q544e\x1b\\dcs\n", "dcs\n"},                                     // DCS
		{"\x1b7saved\x1b8\n", "saved\n"},                                        // two-byte sequences
		{"\x1b(Bcharset\n", "charset\n"},                                        // ESC ( B
		{"\x1b[?2004hpaste\x1b[?2004l\n", "paste\n"},                            // bracketed paste
		{"ask\x1b[6n\n", "ask\n"},                                               // cursor position query
		{"\x1b[1\ncut\n", "\ncut\n"},                                            // a newline cancels a CSI
		{"\x1b]title\nafter\n", "\nafter\n"},                                    // and an OSC
		{"\x1b\x1b[1mx\n", "x\n"},                                               // ESC ESC
		{"a\x1b\x07b\n", "a\x07b\n"},                                            // a control character cancels ESC
		{"\x1b]" + strings.Repeat("t", ttytext.MaxString) + "over\n", "over\n"}, // an endless OSC
		{"\x1b]x\x18after\n", "after\n"},                                        // CAN cancels a string
		{"é\x1b[0m✓\n", "é✓\n"},
	} {
		for _, step := range []int{len(c.out), 1, 2, 3} {
			r := newClock(t, `^\$ $`, true)
			r.out("$ ").settle()
			tu := r.ask("cmd\n", 0)
			r.out("cmd\r\n")
			for i := 0; i < len(c.out); i += step {
				r.out(c.out[i:min(i+step, len(c.out))])
			}
			r.out("$ ").settle()
			if tu.answer.String() != c.answer {
				t.Errorf("%q in steps of %d: answer %q, want %q", c.out, step, tu.answer.String(), c.answer)
			}
			r.finish()
		}
	}
}

// TestEscapesInPrompt: the prompt is matched with escape sequences and
// "\r" removed.
func TestEscapesInPrompt(t *testing.T) {
	c := newClock(t, `^user\$ $`, true)
	c.out("\x1b]0;title\x07\x1b[32muser\x1b[0m$ \x1b[6n\r").settle()
	if !c.tr.Ready() {
		t.Fatal("not ready")
	}
	c.finish()
}

// TestAbandon: what an interrupted turn's child writes until it is ready
// again never reaches the next turn.
func TestAbandon(t *testing.T) {
	c := newClock(t, `^>>> $`, false)
	c.out(">>> ").settle()
	tu := c.ask("loop()\n", 0)
	c.out("partial output ")
	c.take(c.tr.Abandon())
	if c.tr.Ready() || c.tr.InTurn() {
		t.Fatal("an abandoned turn's child is not busy")
	}
	c.out("more\nTraceback:\nKeyboardInterrupt\n").settle().out(">>> ")
	if c.tr.Ready() {
		t.Fatal("ready before the quiet period")
	}
	c.settle()
	if !c.tr.Ready() {
		t.Fatal("not ready at the prompt after the interrupt")
	}
	next := c.ask("print(1)\n", 0)
	c.out("1\n>>> ").settle()
	c.finish()
	if tu.ended || tu.answer.String() != "" {
		t.Errorf("abandoned turn: answer %q (ended %v)", tu.answer.String(), tu.ended)
	}
	if !next.ended || next.answer.String() != "1\n" {
		t.Errorf("next turn: answer %q (ended %v)", next.answer.String(), next.ended)
	}
	if got := c.other[Discarded].String(); got != "partial output more\nTraceback:\nKeyboardInterrupt\n" {
		t.Errorf("discarded %q", got)
	}
}

// TestAbandonNoPrompt: a child that never shows its prompt after an
// interrupt can be given the next turn anyway (the caller's stop timeout):
// what it wrote is discarded.
func TestAbandonNoPrompt(t *testing.T) {
	c := newClock(t, `^>>> $`, false)
	c.out(">>> ").settle()
	c.ask("hang()\n", 0)
	c.take(c.tr.Abandon())
	c.out("still going").settle()
	next := c.ask("print(2)\n", 0)
	c.out("2\n>>> ").settle()
	c.finish()
	if next.answer.String() != "2\n" || !next.ended {
		t.Errorf("answer %q (ended %v)", next.answer.String(), next.ended)
	}
	if got := c.other[Discarded].String(); got != "still going" {
		t.Errorf("discarded %q", got)
	}
}

// TestQuietEnded: a turn with a quiet time ends after it with no output,
// the last line part of the answer, and the child is taken as ready.
func TestQuietEnded(t *testing.T) {
	c := newClock(t, `^>>> $`, false)
	c.out(">>> ").settle()
	tu := c.ask("input('name? ')\n", 200*time.Millisecond)
	if d, ok := c.tr.Deadline(); !ok || !d.Equal(c.now.Add(200*time.Millisecond)) {
		t.Fatalf("deadline %v %v, want the turn's quiet time from Begin", d, ok)
	}
	c.after(10 * time.Millisecond).out("na").after(100 * time.Millisecond).out("me? ")
	c.after(199 * time.Millisecond)
	if tu.ended {
		t.Fatal("ended before its quiet time passed since the last output")
	}
	c.after(time.Millisecond)
	if !tu.ended || !c.tr.Ready() || tu.answer.String() != "name? " {
		t.Fatalf("answer %q (ended %v, ready %v)", tu.answer.String(), tu.ended, c.tr.Ready())
	}
	if _, ok := c.tr.Deadline(); ok {
		t.Error("a deadline while ready")
	}
	c.finish()
}

// TestQuietEndedNoOutput: a turn with no output at all ends after its
// quiet time too.
func TestQuietEndedNoOutput(t *testing.T) {
	c := newClock(t, `^>>> $`, false)
	c.out(">>> ").settle()
	tu := c.ask("x = 1\n", 50*time.Millisecond)
	c.after(50 * time.Millisecond)
	if !tu.ended || tu.answer.Len() != 0 {
		t.Errorf("answer %q (ended %v)", tu.answer.String(), tu.ended)
	}
	c.finish()
}

// TestUnasked: output while the child is ready, between turns, goes to no
// turn, and the child stays ready.
func TestUnasked(t *testing.T) {
	c := newClock(t, `^\$ $`, true)
	c.out("$ ").settle()
	c.out("tick\r\n").settle().out("[1]+ Done").settle()
	if !c.tr.Ready() {
		t.Fatal("output between turns made the child busy")
	}
	tu := c.ask("echo hi\n", 0)
	c.out("echo hi\r\nhi\r\n$ ").settle()
	c.finish()
	if tu.answer.String() != "hi\n" {
		t.Errorf("answer %q", tu.answer.String())
	}
	if got := c.other[Discarded].String(); got != "tick\r\n[1]+ Done" {
		t.Errorf("discarded %q", got)
	}
}

// TestTyped: input outside a turn makes the child busy until its prompt.
func TestTyped(t *testing.T) {
	c := newClock(t, `^\$ $`, false)
	c.out("$ ").settle()
	c.take(c.tr.Typed())
	if c.tr.Ready() {
		t.Fatal("ready after typed input")
	}
	c.settle()
	if c.tr.Ready() {
		t.Fatal("ready again with no output")
	}
	c.out("typed answer\n$ ").settle()
	if !c.tr.Ready() {
		t.Fatal("not ready at the prompt")
	}
	c.finish()
	if got := c.other[Discarded].String(); got != "typed answer\n" {
		t.Errorf("discarded %q", got)
	}
}

// TestStartup: a new child is busy until its first prompt; its banner goes
// to no turn.
func TestStartup(t *testing.T) {
	c := newClock(t, `^>>> $`, false)
	c.out("Python 3\nType help\n").settle()
	if c.tr.Ready() {
		t.Fatal("ready without a prompt")
	}
	c.out(">>> ").settle()
	if !c.tr.Ready() {
		t.Fatal("not ready at the first prompt")
	}
	c.finish()
}

// TestEOF: a child that ends in mid-turn leaves its last line in the
// answer; the tracker is closed.
func TestEOF(t *testing.T) {
	c := newClock(t, `^>>> $`, true)
	c.out(">>> ").settle()
	tu := c.ask("exit()\n", 0)
	c.out("exit()\r\nbye\r\npartial\r")
	c.eof(c.now)
	if !c.tr.Closed() || c.tr.InTurn() || c.tr.Ready() {
		t.Fatal("not closed")
	}
	c.out("late\n").settle()
	c.take(c.tr.Begin([]byte("x\n"), 0, c.now))
	if c.tr.InTurn() {
		t.Fatal("a closed tracker began a turn")
	}
	c.finish()
	if tu.ended || tu.answer.String() != "bye\npartial\r" {
		t.Errorf("answer %q (ended %v)", tu.answer.String(), tu.ended)
	}
	if got := c.other[Discarded].String(); got != "late\n" {
		t.Errorf("discarded %q", got)
	}
}

// TestBeginWhileBusy: the leftovers of a child not yet ready are discarded
// when a turn begins anyway.
func TestBeginWhileBusy(t *testing.T) {
	c := newClock(t, `^>>> $`, false)
	c.out("banner\nhalf a li")
	tu := c.ask("1\n", 0)
	c.out("ne? 1\n>>> ").settle()
	c.finish()
	if got := c.other[Discarded].String(); got != "banner\nhalf a li" {
		t.Errorf("discarded %q", got)
	}
	if tu.answer.String() != "ne? 1\n" {
		t.Errorf("answer %q", tu.answer.String())
	}
}

// TestOwedPrompts: on pipes the child shows a prompt for each later line
// of the input; those are not the answer, nor do they hide the final one.
func TestOwedPrompts(t *testing.T) {
	c := newClock(t, `^(>>>|\.\.\.) $`, false)
	c.out(">>> ").settle()
	tu := c.ask("a = 1\nb = 2\n", 0)
	c.out(">>> ").after(time.Millisecond).out(">>> ").settle()
	if !tu.ended || tu.answer.Len() != 0 {
		t.Errorf("answer %q (ended %v)", tu.answer.String(), tu.ended)
	}
	tu = c.ask("for i in 'ab':\n    print(i)\n\nprint('c')\n", 0)
	c.out("... ... a\nb\n>>> c\n>>> ").settle()
	if !tu.ended || tu.answer.String() != "a\nb\nc\n" {
		t.Errorf("answer %q (ended %v)", tu.answer.String(), tu.ended)
	}
	tu = c.ask("x = (\n", 0) // the child wants more input: that is its prompt
	c.out("... ").settle()
	if !tu.ended || tu.answer.Len() != 0 {
		t.Errorf("answer %q (ended %v)", tu.answer.String(), tu.ended)
	}
	c.finish()
}

// TestLongLineStreams: a line longer than MaxHold is handed on in pieces:
// the tracker never holds more than MaxHold of it.
func TestLongLineStreams(t *testing.T) {
	c := newClock(t, `^>>> $`, true)
	c.out(">>> ").settle()
	tu := c.ask("print('x' * 300000)\n", 0)
	c.out("print('x' * 300000)\r\n")
	chunk := strings.Repeat("x", 64<<10)
	fed := 0
	for fed < 300000 {
		n := min(len(chunk), 300000-fed)
		c.out(chunk[:n])
		fed += n
		if held := fed - tu.answer.Len(); held > MaxHold {
			t.Fatalf("%d bytes held after %d", held, fed)
		}
	}
	c.out("\r\n>>> ").settle()
	c.finish()
	if tu.answer.String() != strings.Repeat("x", 300000)+"\n" || !tu.ended {
		t.Errorf("answer of %d bytes (ended %v)", tu.answer.Len(), tu.ended)
	}
}

// TestLongAnswerStreams: lines are handed on as they end.
func TestLongAnswerStreams(t *testing.T) {
	c := newClock(t, `^>>> $`, false)
	c.out(">>> ").settle()
	tu := c.ask("big()\n", 0)
	line := strings.Repeat("y", 99) + "\n"
	var want bytes.Buffer
	for range 3000 {
		c.out(line)
		want.WriteString(line)
		if tu.answer.Len() != want.Len() {
			t.Fatalf("answer %d bytes after %d fed", tu.answer.Len(), want.Len())
		}
	}
	c.out(">>> ").settle()
	c.finish()
	if !bytes.Equal(tu.answer.Bytes(), want.Bytes()) {
		t.Error("answer differs")
	}
}

// TestOutputUnchanged: Output neither changes nor keeps its argument.
func TestOutputUnchanged(t *testing.T) {
	tr, _ := New(Config{Prompt: regexp.MustCompile(`^\$ $`), Terminal: true})
	p := []byte("a\r\n\x1b[1mb\r\n$ ")
	orig := append([]byte(nil), p...)
	segs := tr.Output(p, time.Unix(0, 0))
	if !bytes.Equal(p, orig) {
		t.Fatal("Output changed its argument")
	}
	for i := range p {
		p[i] = 'z'
	}
	var got []byte
	for _, s := range segs {
		got = append(got, s.Data...)
	}
	if !bytes.Equal(got, orig[:len(got)]) {
		t.Errorf("segments share memory with the argument: %q", got)
	}
}

// TestEchoModes: EchoOff keeps a terminal's echo in the answer; EchoOn
// removes a child's own echo on pipes; EchoAuto removes it on pipes when
// more than the prompt follows it.
func TestEchoModes(t *testing.T) {
	for _, c := range []struct {
		tty    bool
		mode   EchoMode
		out    string
		answer string
	}{
		{true, EchoOff, "x\r\nX\r\n", "x\nX\n"},
		{false, EchoOn, "x\nX\n", "X\n"},
		{false, EchoOn, "x\n", ""},
		{false, EchoAuto, "x\nX\n", "X\n"}, // more than the prompt follows: echo
		{false, EchoAuto, "x\n", "x\n"},    // nothing else: an answer equal to the input
		{false, EchoOff, "x\nX\n", "x\nX\n"},
	} {
		r := newReplay(t, Config{Prompt: regexp.MustCompile(`^> $`), Terminal: c.tty, Echo: c.mode})
		now := r.t0
		r.output([]byte("> "), now)
		now = now.Add(time.Second)
		r.begin("x\n", 0, now)
		r.output([]byte(c.out+"> "), now)
		r.finish()
		if got := r.turns[0]; !got.ended || got.answer.String() != c.answer {
			t.Errorf("terminal %v, echo mode %d: answer %q (ended %v), want %q", c.tty, c.mode, got.answer.String(), got.ended, c.answer)
		}
	}
}
