package turn

// lineEnd hands on the current line, which has just ended with "\n".
func (t *Tracker) lineEnd() {
	t.settle(len(t.ln.runs), true)
	t.ln.start = true
}

// cut hands on most of the current line, which has grown to MaxHold
// without a newline: all but the undecided "\r" that ends it and what
// follows them, which may yet turn out to be part of a "\r\n".
func (t *Tracker) cut() {
	k := len(t.ln.runs)
	switch {
	case t.ln.crAt == 0: // nothing but "\r" and escape sequences: decide
		t.ln.decide(clNoise)
	case t.ln.crAt > 0:
		k = t.ln.crAt
	}
	t.settle(k, false)
	t.ln.vis = t.ln.vis[:0] // what is left of the line shows nothing
	t.ln.start = false
}

// settle hands on the current line's first k runs, a whole line or a piece
// of one, as what they are: echo of the turn's input, the turn's answer, or
// output of no turn.
func (t *Tracker) settle(k int, whole bool) {
	if t.state != stTurn {
		t.release(k, Discarded)
		t.fresh = true
		return
	}
	if ok, prompted := t.exp.match(t.ln.vis, whole, t.ln.start, t.prompt, t.terminal); ok {
		if prompted && t.owed > 0 {
			t.owed--
		}
		t.release(k, Echo)
		t.fresh = false
		return
	}
	t.answer(k)
	t.fresh = true
}
