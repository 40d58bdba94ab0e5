package turn

// maxOwedScan is the most of a line's start searched for a prompt the
// child showed for a later line of the input: such prompts are short.
const maxOwedScan = 64

// maxOwedLines is how many answer lines in a row are searched for such a
// prompt: a child shows it when it reads the next line, soon after the
// answer to the one before. It bounds the cost of a long answer to input
// whose prompts never show.
const maxOwedLines = 256

// answer hands on the current line's first k runs as the turn's answer,
// less the prompts at its start that the child showed for the input's
// later lines (on pipes, "for ...:\n    print(i)\n\n" gives "... ... 0"):
// those are Prompt. The echo, when the terminal shows it, carries those
// prompts itself. They are looked for in up to maxOwedLines lines after
// the last one found.
func (t *Tracker) answer(k int) {
	if t.owed > 0 && t.owedLook > 0 && t.ln.start && !t.exp.pending() {
		m, shown := t.owedPrompts(t.ln.vis(), maxOwedScan)
		t.owedLook--
		if shown > 0 {
			t.owedLook = maxOwedLines
			n := t.ln.upTo(m)
			before := len(t.ln.runs)
			j := t.ln.split(n)
			k += len(t.ln.runs) - before
			t.release(j, Prompt)
			k -= j
			t.ln.skip(m) // the line begins after them
			t.owed -= shown
		}
	}
	t.release(k, Answer)
}

// owedPrompts finds the prompts the child may have shown for the input's
// later lines at the start of v: it returns their length and number, each
// the shortest start of what is left that is a prompt (or a continuation
// prompt), searched within limit bytes.
func (t *Tracker) owedPrompts(v []byte, limit int) (m, shown int) {
	for shown < t.owed {
		n := t.m.prefix(v[m:], limit)
		if n == 0 {
			break
		}
		m, shown = m+n, shown+1
	}
	return m, shown
}
