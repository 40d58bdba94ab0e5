package turn

import "time"

// due does what has come by now: a child quiet at its prompt is ready; a
// turn quiet for its own quiet time ends.
func (t *Tracker) due(now time.Time) {
	if t.armed && !now.Before(t.last.Add(t.quiet)) {
		t.armed = false
		if ok, head := t.atPrompt(); ok {
			t.promptAfter(head)
			t.ready()
			return
		}
	}
	if t.state == stTurn && t.turnQuiet > 0 && !now.Before(t.turnDeadline()) {
		t.ln.decide(clCRText)
		t.answer(len(t.ln.runs))
		t.ready() // nothing is left to be the prompt
	}
}

// turnDeadline is when the turn in progress ends for want of output.
func (t *Tracker) turnDeadline() time.Time {
	from := t.begun
	if t.last.After(from) {
		from = t.last
	}
	return from.Add(t.turnQuiet)
}

// atPrompt reports whether the child, quiet, shows its prompt: something
// other than echo came since its input, the echo is complete if it began,
// and the current line is the prompt, after as many prompts as the child
// may have shown for later lines of the input (">>> >>> " for "a=1\nb=2\n"
// on pipes), or else ends with it. head is how much of what shows comes
// before the prompt: the end of output that did not end its line ("x" of
// "x>>> " after print("x", end="")).
func (t *Tracker) atPrompt() (ok bool, head int) {
	if t.state != stBusy && t.state != stTurn {
		return false, 0
	}
	if !t.fresh && t.ln.n == 0 || t.state == stTurn && t.exp.pending() {
		return false, 0
	}
	if t.promptLine() {
		return true, 0
	}
	v := t.ln.vis
	for n := min(len(v)-1, maxSuffix); n > 0; n-- {
		if t.prompt.Match(v[len(v)-n:]) {
			return true, len(v) - n
		}
	}
	return false, 0
}

// maxSuffix is the longest end of a line that is looked at for the prompt
// when the whole line is not it: prompts are short, and a long line must
// not cost a regular expression match per byte.
const maxSuffix = 64

// promptLine reports whether the current line is the prompt, after as many
// prompts as the child may have shown for later lines of the input.
func (t *Tracker) promptLine() bool {
	v := t.ln.vis
	for shown := 0; ; shown++ {
		if t.prompt.Match(v) {
			return true
		}
		if shown == t.owed || !t.ln.start {
			return false
		}
		m := t.promptPrefix(v, maxOwedScan)
		if m == 0 {
			return false
		}
		v = v[m:]
	}
}

// promptAfter hands on what comes before the prompt on the current line,
// the first head bytes of what shows, as the turn's answer (or as output of
// no turn).
func (t *Tracker) promptAfter(head int) {
	if head == 0 {
		return
	}
	t.ln.decide(clCRText) // the line goes on: no "\n" follows them
	k := t.ln.split(t.ln.shown(head))
	if t.state != stTurn {
		t.release(k, Discarded)
		return
	}
	t.answer(k)
}

// ready makes the child ready: the current line is its prompt, and a turn
// in progress ends.
func (t *Tracker) ready() {
	t.release(len(t.ln.runs), Prompt)
	t.ln.start = true
	if t.state == stTurn {
		t.emit(End, t.hold, t.hold)
	}
	t.state, t.armed = stReady, false
	t.endTurn()
}
