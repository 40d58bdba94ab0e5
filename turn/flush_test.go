package turn

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// statusPrompt is a shell's prompt that shows $? and the working
// directory: PS1='[$?|\w] $ '.
const statusPrompt = `^\[(?P<status>\d+)\|(?P<cwd>[^\]]*)\] \$ $`

// TestQuestionHandedOn: the question a command asks and waits on, a last
// line that is not the prompt, reaches the answer once the child is quiet
// for the settle period, and not before; the turn goes on, the typed
// answer and the rest of the output follow, and the turn ends at the
// prompt with the command's status. Nothing is handed on twice.
func TestQuestionHandedOn(t *testing.T) {
	for _, c := range []struct {
		name     string
		tty      bool
		question string // as written
		typed    string // the typed answer's echo, if any, and the rest
		answer   string
	}{
		{"read on pipes", false, "Enter name: ", "hi bob\n", "Enter name: hi bob\n"},
		{"read on a terminal", true, "Enter name: ", "bob\r\nhi bob\r\n", "Enter name: bob\nhi bob\n"},
		{"input() on a terminal", true, "\x1b[?2004lEnter your name: ", "bob\r\n'bob'\r\n", "Enter your name: bob\n'bob'\n"},
		{"[Y/n] on pipes", false, "Proceed? [Y/n] ", "yes\n", "Proceed? [Y/n] yes\n"},
		{"[Y/n] on a terminal", true, "Proceed? [Y/n] ", "y\r\nyes\r\n", "Proceed? [Y/n] y\nyes\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newClock(t, statusPrompt, c.tty)
			r.out("[0|/] $ ").settle()
			tu := r.ask("ask\n", 0)
			if c.tty {
				r.out("ask\r\n")
			}
			r.after(time.Millisecond).out(c.question)
			r.after(DefaultSettle - time.Nanosecond)
			if tu.answer.Len() != 0 || !r.tr.Unfinished() {
				t.Fatalf("answer %q (unfinished %v) before the settle period", tu.answer.String(), r.tr.Unfinished())
			}
			r.after(time.Nanosecond)
			want := strings.TrimPrefix(c.question, "\x1b[?2004l")
			if tu.answer.String() != want || tu.ended || !r.tr.InTurn() || r.tr.Unfinished() {
				t.Fatalf("after the settle period: answer %q (ended %v, in turn %v), want %q in a turn that goes on",
					tu.answer.String(), tu.ended, r.tr.InTurn(), want)
			}
			r.settle() // nothing more comes: nothing changes
			if tu.answer.String() != want || tu.ended {
				t.Fatalf("answer %q (ended %v) while quiet", tu.answer.String(), tu.ended)
			}
			r.take(r.tr.Typed())
			r.out(c.typed).after(time.Millisecond).out("[1|/tmp] $ ").settle()
			if !tu.ended || tu.answer.String() != c.answer || tu.status != 1 {
				t.Errorf("answer %q (ended %v, status %d), want %q with status 1", tu.answer.String(), tu.ended, tu.status, c.answer)
			}
			r.finish()
			if got := r.other[Prompt].String(); !strings.HasSuffix(got, "[1|/tmp] $ ") {
				t.Errorf("prompts %q", got)
			}
		})
	}
}

// TestQuestionSettle: a caller that sees the child wait for input hands
// the question on at once (Settle), without the settle period; the turn
// goes on.
func TestQuestionSettle(t *testing.T) {
	r := newClock(t, `^>>> $`, false)
	r.out(">>> ").settle()
	tu := r.ask("input('Enter your name: ')\n", 0)
	r.out("Enter your name: ")
	if r.tr.AtPrompt() || !r.tr.Unfinished() {
		t.Fatalf("AtPrompt %v, Unfinished %v: want only Unfinished", r.tr.AtPrompt(), r.tr.Unfinished())
	}
	r.take(r.tr.Settle(r.now))
	if tu.answer.String() != "Enter your name: " || tu.ended || r.tr.Unfinished() {
		t.Fatalf("answer %q (ended %v, unfinished %v)", tu.answer.String(), tu.ended, r.tr.Unfinished())
	}
	if _, ok := r.tr.Deadline(); ok {
		t.Error("a deadline with nothing held")
	}
	r.take(r.tr.Typed())
	r.out("'bob'\n>>> ")
	if !r.tr.AtPrompt() || r.tr.Unfinished() {
		t.Fatalf("at the prompt: AtPrompt %v, Unfinished %v", r.tr.AtPrompt(), r.tr.Unfinished())
	}
	r.take(r.tr.Settle(r.now))
	if !tu.ended || tu.answer.String() != "Enter your name: 'bob'\n" {
		t.Errorf("answer %q (ended %v)", tu.answer.String(), tu.ended)
	}
	r.finish()
}

// TestQuestionTyped: input typed while the question is still held (the
// settle period not over) hands it on at once, before the typed input's
// echo, and the turn goes on; typed input at a prompt-like line in a turn
// hands that on too, and the child is busy until its prompt comes again.
func TestQuestionTyped(t *testing.T) {
	r := newClock(t, `^\$ $`, true)
	r.out("$ ").settle()
	tu := r.ask("cmd\n", 0)
	r.out("cmd\r\nEnter name: ")
	r.take(r.tr.Typed())
	if tu.answer.String() != "Enter name: " || tu.ended {
		t.Fatalf("answer %q (ended %v) when input was typed", tu.answer.String(), tu.ended)
	}
	r.out("bob\r\n$ ")
	r.take(r.tr.Typed()) // typed again at once: "$ " is no prompt now
	r.settle()
	if tu.ended || tu.answer.String() != "Enter name: bob\n$ " {
		t.Fatalf("answer %q (ended %v)", tu.answer.String(), tu.ended)
	}
	r.out("x\r\n$ ").settle()
	if !tu.ended || tu.answer.String() != "Enter name: bob\n$ x\n" {
		t.Errorf("answer %q (ended %v)", tu.answer.String(), tu.ended)
	}
	r.finish()
}

// TestPauseBeforeNewline: output that pauses before its newline
// (printf abc; sleep 3; echo def) is handed on at the pause, the rest
// when it comes; a "\r" at the end of what was handed on waits to see
// whether "\n" follows (terminal: "\r\n" is a newline) or text does (a
// progress line keeps its own).
func TestPauseBeforeNewline(t *testing.T) {
	for _, c := range []struct {
		name         string
		tty          bool
		first, later string
		early, whole string // the answer after the pause, and in the end
	}{
		{"pipes", false, "abc", "def\n", "abc", "abcdef\n"},
		{"terminal", true, "abc", "def\r\n", "abc", "abcdef\n"},
		{"terminal, carriage return", true, "50%\r", "\n", "50%", "50%\n"},
		{"terminal, progress", true, "50%\r", "60%\r\n", "50%", "50%\r60%\n"},
		{"terminal, escape", true, "\x1b[1mabc", "\x1b[0m\r\n", "abc", "abc\n"},
		{"pipes, carriage return", false, "50%\r", "60%\n", "50%", "50%\r60%\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := newClock(t, `^\$ $`, c.tty)
			r.out("$ ").settle()
			tu := r.ask("cmd\n", 0)
			if c.tty {
				r.out("cmd\r\n")
			}
			r.out(c.first).settle()
			if tu.answer.String() != c.early || tu.ended {
				t.Fatalf("after the pause: answer %q (ended %v), want %q", tu.answer.String(), tu.ended, c.early)
			}
			r.out(c.later).out("$ ").settle()
			if !tu.ended || tu.answer.String() != c.whole {
				t.Errorf("answer %q (ended %v), want %q", tu.answer.String(), tu.ended, c.whole)
			}
			r.finish()
		})
	}
}

// TestLongPromptAfterOutput: a prompt longer than 64 bytes after output
// that did not end its line (printf foo, and a prompt that shows a long
// working directory) ends the turn, with "foo" the answer, exactly once:
// whether or not "foo" was handed on before the prompt came, and whether
// the prompt came at once or in pieces.
func TestLongPromptAfterOutput(t *testing.T) {
	dir := "/a/long/working/dir/" + strings.Repeat("x", 170)
	prompt := "[0|" + dir + "] $ "
	for _, c := range []struct {
		name   string
		pieces []string
		gaps   []time.Duration // before each piece
	}{
		{"at once", []string{"foo" + prompt}, []time.Duration{time.Millisecond}},
		{"foo alone first", []string{"foo", prompt}, []time.Duration{time.Millisecond, time.Millisecond}},
		{"foo handed on first", []string{"foo", prompt}, []time.Duration{time.Millisecond, time.Second}},
		{"prompt in pieces", []string{"foo", prompt[:100], prompt[100:]}, []time.Duration{time.Millisecond, time.Second, time.Millisecond}},
	} {
		for _, tty := range []bool{false, true} {
			r := newClock(t, statusPrompt, tty)
			r.out("[0|/] $ ").settle()
			tu := r.ask("printf foo\n", 0)
			if tty {
				r.out("printf foo\r\n")
			}
			for i, p := range c.pieces {
				r.after(c.gaps[i]).out(p)
			}
			r.settle()
			if !tu.ended || tu.answer.String() != "foo" || tu.status != 0 {
				t.Errorf("%s (terminal %v): answer %q (ended %v, status %d), want \"foo\" at the prompt",
					c.name, tty, tu.answer.String(), tu.ended, tu.status)
			}
			if len(tu.groups) != 2 || tu.groups[1].Text != dir {
				t.Errorf("%s (terminal %v): groups %q, want the whole working directory", c.name, tty, tu.groups)
			}
			r.finish()
			if got := r.other[Prompt].String(); got != "[0|/] $ "+prompt {
				t.Errorf("%s (terminal %v): prompts %q", c.name, tty, got)
			}
		}
	}
}

// TestPromptBegunInHandedOn: a prompt whose start was handed on before
// the rest came (the child paused in it) still ends the turn, its status
// read from the whole line; what was handed on stays in the answer, and
// only what was held of the prompt is left out of it.
func TestPromptBegunInHandedOn(t *testing.T) {
	r := newClock(t, statusPrompt, false)
	r.out("[0|/] $ ").settle()
	tu := r.ask("false\n", 0)
	r.out("out\n[1|/s").settle()
	if tu.answer.String() != "out\n[1|/s" || tu.ended {
		t.Fatalf("answer %q (ended %v)", tu.answer.String(), tu.ended)
	}
	r.out("rc] $ ").settle()
	if !tu.ended || tu.answer.String() != "out\n[1|/s" || tu.status != 1 || tu.groups[1].Text != "/src" {
		t.Errorf("answer %q (ended %v, status %d, groups %q)", tu.answer.String(), tu.ended, tu.status, tu.groups)
	}
	r.finish()
	if got := r.other[Prompt].String(); got != "[0|/] $ rc] $ " {
		t.Errorf("prompts %q", got)
	}
}

// TestPromptBeyondMaxHold: a prompt longer than MaxHold, which the
// tracker hands on in pieces while it comes, is still seen: the turn ends
// with its status, and what was handed on of it stays in the answer.
func TestPromptBeyondMaxHold(t *testing.T) {
	dir := "/" + strings.Repeat("d", 3*MaxHold)
	r := newClock(t, statusPrompt, false)
	r.out("[0|/] $ ").settle()
	tu := r.ask("printf foo\n", 0)
	r.out("foo[3|" + dir + "] $ ").settle()
	if !tu.ended || tu.status != 3 || len(tu.groups) != 2 || tu.groups[1].Text != dir {
		t.Fatalf("ended %v, status %d, %d groups", tu.ended, tu.status, len(tu.groups))
	}
	if !strings.HasPrefix(tu.answer.String(), "foo[3|/ddd") || tu.answer.Len() > 3+6+len(dir) {
		t.Errorf("answer of %d bytes: %.20q", tu.answer.Len(), tu.answer.String())
	}
	r.finish()
}

// TestLineBound: the prompt is matched against the last maxLine bytes of
// a line: a longer line's start is not looked at, and the text held for
// that stays within its bound.
func TestLineBound(t *testing.T) {
	for _, c := range []struct {
		pad   int
		ended bool
	}{
		{maxLine - 100, true}, // the whole line is within the bound
		{maxLine, false},      // "foo" is beyond it: ^foo cannot match
	} {
		r := newClock(t, `^foo.*\$ $`, false)
		r.out("foo$ ").settle()
		tu := r.ask("cmd\n", 0)
		r.out("foo")
		for p := c.pad; p > 0; p -= 10000 {
			r.after(time.Millisecond).out(strings.Repeat("y", min(p, 10000)))
			if cap(r.tr.ln.text) > 3*maxLine {
				t.Fatalf("%d bytes kept for a line", cap(r.tr.ln.text))
			}
		}
		r.out("$ ").settle()
		if tu.ended != c.ended || !c.ended && tu.answer.Len() != 3+c.pad+2 {
			t.Errorf("line of %d bytes: answer of %d bytes (ended %v), want ended %v", 3+c.pad+2, tu.answer.Len(), tu.ended, c.ended)
		}
		r.eof(r.now)
		r.finish()
		if cap(r.tr.ln.text) > keepLineCap {
			t.Errorf("%d bytes kept after the line ended", cap(r.tr.ln.text))
		}
	}
}

// TestEchoNotHandedOnEarly: on pipes, a pause in what may be the echo of
// the input (the start of its first line, from a child not yet known to
// echo) hands nothing on: the line, once whole, is still found to be the
// echo. A pause in the terminal's echo hands it on as echo.
func TestEchoNotHandedOnEarly(t *testing.T) {
	r := newReplay(t, Config{Prompt: regexp.MustCompile(`^> $`)})
	now := r.t0
	r.output([]byte("> "), now)
	now = now.Add(time.Second)
	r.begin("abc\n", 0, now)
	r.output([]byte("ab"), now)
	now = now.Add(time.Second)
	r.until(now)
	if r.turns[0].answer.Len() != 0 {
		t.Fatalf("answer %q: the start of the echo was handed on as answer", r.turns[0].answer.String())
	}
	r.output([]byte("c\nABC\n> "), now)
	r.finish()
	if got := r.turns[0]; !got.ended || got.answer.String() != "ABC\n" || got.echo.String() != "abc\n" {
		t.Errorf("answer %q, echo %q (ended %v)", got.answer.String(), got.echo.String(), got.ended)
	}

	c := newClock(t, `^> $`, true)
	c.out("> ").settle()
	tu := c.ask("abc\n", 0)
	c.out("ab").settle().out("c\r\nABC\r\n> ").settle()
	if !tu.ended || tu.answer.String() != "ABC\n" || tu.echo.String() != "abc\r\n" {
		t.Errorf("terminal: answer %q, echo %q (ended %v)", tu.answer.String(), tu.echo.String(), tu.ended)
	}
	c.finish()
}

// TestSuffix: the longest end of a line that a prompt expression
// matches, for expressions anchored at both ends (matched backwards) or
// not, over long lines, and the same as trying every end for random lines.
func TestSuffix(t *testing.T) {
	long := strings.Repeat("z", 1<<16)
	for _, c := range []struct {
		re, v string
		lo    int
		want  int
	}{
		{`^>>> $`, "x>>> ", 1, 1},
		{`^>>> $`, "x>> ", 1, -1},
		{`^>>> $`, ">>> ", 1, -1}, // the whole line is not an end of it
		{`^>>> $`, ">>> ", 0, 0},
		{`\$ $`, "ab$ ", 1, 1}, // unanchored: every end that holds it
		{`^\[\d+\] \$ $`, "[1] foo[2] $ ", 1, 7},
		{`^a$|^b$`, "xab", 1, 2},
		{`^a$|b$`, "xab", 1, 1},
		{`^>>> $|^\.\.\. $`, long + "... ", 1, len(long)},
		{`^(?:x|^)>>> $`, "y>>> ", 1, 1},
		{`^$`, "abc", 1, -1}, // an empty end is no end
		{`(?i)^P> $`, "xp> ", 1, 1},
		{`^é+ $`, "aéé ", 1, 1},
		{`^.*\$ $`, long + "$ ", 1, 1},
		{`^\[(?P<status>\d+)\|[^]]*\] \$ $`, "foo[0|/" + long + "] $ ", 1, 3},
	} {
		m := newMatcher(regexp.MustCompile(c.re), nil)
		if got := m.suffix([]byte(c.v), c.lo); got != c.want {
			t.Errorf("%s in %.20q from %d: %d, want %d", c.re, c.v, c.lo, got, c.want)
		}
	}
	m := newMatcher(regexp.MustCompile(`^(>>>|\.\.\.) $`), regexp.MustCompile(`^\.\.\. $`))
	if got := m.suffix([]byte("a... "), 1); got != 1 {
		t.Errorf("continuation prompt: %d", got)
	}
	if m.promptEnds.rev == nil || newMatcher(regexp.MustCompile(`\$ $`), nil).promptEnds.rev != nil {
		t.Error("an expression anchored at both ends is to be matched backwards, and only such")
	}

	// Against every end tried in turn.
	exprs := []string{`^a+b$`, `^(a|ab)$|^b$`, `^[ab]*b $`, `a b$`, `^a(?:b|)$`, `b`, `^(?:a|b)b?$`, `^ab$|a $`,
		`(?i)^A[b ]$`, `^a{2,3} ?$`, `^(?:ab)+$`, `^$`, `^ $`}
	seed := uint32(1)
	for _, expr := range exprs {
		re := regexp.MustCompile(expr)
		m := newMatcher(re, nil)
		for range 500 {
			v := make([]byte, 0, 12)
			for range int(seed>>28) % 12 {
				seed = seed*1664525 + 1013904223
				v = append(v, "ab "[seed>>24%3])
			}
			seed = seed*1664525 + 1013904223
			lo := int(seed>>24) % 2
			want := -1
			if len(v) == 0 && lo == 0 && re.Match(v) {
				want = 0 // an empty line is its own end
			}
			for i := lo; i < len(v); i++ {
				if re.Match(v[i:]) {
					want = i
					break
				}
			}
			if got := m.suffix(v, lo); got != want {
				t.Errorf("%s in %q from %d: %d, want %d", expr, v, lo, got, want)
			}
		}
	}
}
