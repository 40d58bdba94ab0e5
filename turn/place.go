package turn

// lineEnd hands on the current line, which has just ended with "\n".
func (t *Tracker) lineEnd() {
	t.resolve(t.ln.vis(), true)
	t.place(len(t.ln.runs), true)
	t.ln.newLine()
}

// cut hands on most of the current line, which has grown to MaxHold
// without a newline: all but the undecided "\r" that ends it and what
// follows them, which may yet turn out to be part of a "\r\n". A line
// before it held with it is handed on first, and may be all there is to
// hand on.
func (t *Tracker) cut() {
	if t.ln.pend > 0 {
		t.resolve(t.ln.vis(), false)
		if t.ln.n < MaxHold {
			return
		}
	}
	k := len(t.ln.runs)
	switch {
	case t.ln.crAt == 0: // nothing but "\r" and escape sequences: decide
		t.ln.decide(clNoise)
	case t.ln.crAt > 0:
		k = t.ln.crAt
	}
	t.place(k, false)
	t.ln.keep()
	t.ln.sent() // what is left held shows nothing
	t.ln.start = false
}

// place hands on the current line's first k runs, a whole line or a piece
// of one, as what they are: echo of the turn's input, the turn's answer, or
// output of no turn. A whole line that may be the echo of a child not yet
// known to echo is held instead, until what follows tells (learn.go).
func (t *Tracker) place(k int, whole bool) {
	if t.state != stTurn {
		t.release(k, Discarded)
		t.fresh = true
		return
	}
	if t.echo == echoLearn && t.exp.state == echoFirst {
		if whole && t.ln.start && t.exp.bare(t.ln.vis()) {
			t.holdLine()
			return
		}
		t.exp.miss()
	}
	if ok, prompted := t.exp.match(t.ln.vis(), whole, t.ln.start, &t.m, t.terminal); ok {
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
