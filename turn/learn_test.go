package turn

import (
	"strings"
	"testing"
)

// askPipe asks input of a child on pipes at its prompt p and gives its
// output, then waits out the settle period.
func askPipe(c *clockReplay, input, output string) *turnResult {
	tu := c.ask(input, 0)
	c.out(output).settle()
	return tu
}

// TestEchoLearnt: bash -i on pipes echoes each input line after its
// prompt (readline): once a turn shows more than the echo, the echo is
// removed from that turn's answer and every later one's.
func TestEchoLearnt(t *testing.T) {
	for _, c := range []struct {
		name  string
		turns [][3]string // input, output, answer
	}{
		{"silent first", [][3]string{
			{"true\n", "true\n$ ", "true\n"}, // nothing tells yet
			{"echo $((6*7))\n", "echo $((6*7))\n42\n$ ", "42\n"},
			{"true\n", "true\n$ ", ""},
		}},
		{"a block first", [][3]string{
			{"if true; then\necho yes\nfi\n", "if true; then\n> echo yes\n> fi\nyes\n$ ", "yes\n"},
			{"cd /\n", "cd /\n$ ", ""},
		}},
		{"two commands", [][3]string{
			{"true\ntrue\n", "true\n$ true\n$ ", ""},
		}},
		{"output without a newline", [][3]string{
			{"printf x\n", "printf x\nx$ ", "x"},
			{"echo\n", "echo\n\n$ ", "\n"},
		}},
		{"a long line", [][3]string{
			{"yes | head -c 9000 | tr -d '\\n'\n", "yes | head -c 9000 | tr -d '\\n'\n" + strings.Repeat("y", 4500) + "$ ", strings.Repeat("y", 4500)},
			{"true\n", "true\n$ ", ""},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cl := newClock(t, `^\$ $`, false)
			cl.out("$ ").settle()
			for i, tt := range c.turns {
				tu := askPipe(cl, tt[0], tt[1])
				if !tu.ended || tu.answer.String() != tt[2] {
					t.Errorf("turn %d %q: answer %q (ended %v), want %q", i, tt[0], tu.answer.String(), tu.ended, tt[2])
				}
			}
			cl.finish()
		})
	}
}

// TestEchoNotLearnt: a child that does not echo keeps its answers whole,
// an answer equal to its input included, and is not taken for one that
// echoes.
func TestEchoNotLearnt(t *testing.T) {
	c := newClock(t, `^>>> $`, false)
	c.out(">>> ").settle()
	for i, tt := range [][3]string{
		{"42\n", "42\n>>> ", "42\n"},
		{"1\nprint(2)\n", "1\n>>> 2\n>>> ", "1\n2\n"}, // the prompt for the next line, no echo of it
		{"'a'\n", "'a'\n>>> ", "'a'\n"},
		{"print(6*7)\n", "42\n>>> ", "42\n"},
		{"42\n", "42\n>>> ", "42\n"},
	} {
		tu := askPipe(c, tt[0], tt[1])
		if !tu.ended || tu.answer.String() != tt[2] {
			t.Errorf("turn %d %q: answer %q (ended %v), want %q", i, tt[0], tu.answer.String(), tu.ended, tt[2])
		}
	}
	c.finish()
}

// TestEchoHeldThenAbandoned: a line held to tell whether it was echo goes
// with its turn when the turn is abandoned, and with the child's exit to
// the answer.
func TestEchoHeldThenAbandoned(t *testing.T) {
	c := newClock(t, `^\$ $`, false)
	c.out("$ ").settle()
	tu := c.ask("sleep 9\n", 0)
	c.out("sleep 9\n")
	c.take(c.tr.Abandon())
	c.out("^C\n$ ").settle()
	if tu.answer.Len() != 0 || c.other[Discarded].String() != "sleep 9\n^C\n" {
		t.Errorf("answer %q, discarded %q", tu.answer.String(), c.other[Discarded].String())
	}
	tu = c.ask("exit\n", 0)
	c.out("exit\n")
	c.eof(c.now)
	if tu.answer.String() != "exit\n" {
		t.Errorf("answer %q at the child's exit", tu.answer.String())
	}
	c.finish()
}
