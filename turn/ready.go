package turn

import "time"

// due does what has come by now: a child quiet at its prompt is ready (or,
// at its continuation prompt after the whole input, ends the turn as
// incomplete), a turn's unfinished last line that is not the prompt is
// handed on (flush); a turn quiet for its own quiet time ends. Before
// output (more), the settle period must have passed, not just come:
// output at the instant it ends was not quiet for it, which matters when
// it is 0.
func (t *Tracker) due(now time.Time, more bool) {
	settled := t.last.Add(t.settle)
	if t.armed && (now.After(settled) || !more && now.Equal(settled)) && t.settled() {
		return
	}
	if t.state == stTurn && t.turnQuiet > 0 && !now.Before(t.turnDeadline()) {
		t.ln.decide(clCRText)
		t.resolve(t.ln.vis(), false)
		t.answer(len(t.ln.runs))
		t.groups = nil
		t.ready() // nothing is left to be the prompt
	}
}

// settled takes the current line for what it is, the settle period over
// (look), and hands it on when it is neither prompt (flush). It reports
// whether the child became ready or its turn incomplete.
func (t *Tracker) settled() bool {
	if t.look() {
		return true
	}
	t.flush()
	return false
}

// look takes the current line for what it is, the settle period over: the
// prompt makes the child ready, the continuation prompt after the whole
// input ends the turn as incomplete. It reports whether it did either.
func (t *Tracker) look() bool {
	t.armed = false
	at := t.atPrompt()
	switch at.end {
	case endReady:
		t.groups = t.m.groups(t.ln.shows()[at.from:])
		t.promptAfter(at.head)
		t.ready()
	case endIncomplete:
		t.groups = nil
		t.promptAfter(at.head)
		t.incomplete()
	default:
		return false
	}
	return true
}

// turnDeadline is when the turn in progress ends for want of output.
func (t *Tracker) turnDeadline() time.Time {
	from := t.begun
	if t.last.After(from) {
		from = t.last
	}
	return from.Add(t.turnQuiet)
}

// lineEnd is what the current line ends, when the settle period is over.
type lineEnd uint8

const (
	endNone       lineEnd = iota
	endReady              // the prompt: the child is ready
	endIncomplete         // the continuation prompt after the whole input
)

// promptAt is where the current line shows a prompt: the prompt is
// ln.shows()[from:], and its first head bytes come before it on the line
// (output that did not end its line).
type promptAt struct {
	end        lineEnd
	head, from int
}

// atPrompt reports whether the child, quiet, shows its prompt: something
// other than echo came since its input, the echo is complete if it began,
// and the current line, all of it (what shows of it, pieces handed on
// included, up to its last maxLine bytes), is the prompt, after as many
// prompts as the child may have shown for later lines of the input
// (">>> >>> " for "a=1\nb=2\n" on pipes), or else ends with it ("x" of
// "x>>> " after print("x", end="") comes before it): the longest end of
// the line that is a prompt of either kind (suffix.go).
func (t *Tracker) atPrompt() promptAt {
	if t.state != stBusy && t.state != stTurn {
		return promptAt{}
	}
	if !t.fresh && t.ln.n == 0 || t.state == stTurn && t.exp.pending() {
		return promptAt{}
	}
	v := t.ln.shows()
	i := t.m.suffix(v, 0)
	if i != 0 && t.owed > 0 && !t.ln.cutShort() {
		if at, ok := t.owedLine(v); ok {
			return at
		}
	}
	if i < 0 {
		return promptAt{}
	}
	end, _ := t.which(v[i:], t.owed == 0)
	return promptAt{end: end, head: i, from: i}
}

// owedLine reports whether v, the current line, is prompts the child
// showed for later lines of the input and then the prompt, or the
// continuation prompt after all of them.
func (t *Tracker) owedLine(v []byte) (promptAt, bool) {
	from := 0
	for shown := 1; shown <= t.owed; shown++ {
		m := t.m.prefix(v[from:], maxOwedScan)
		if m == 0 {
			return promptAt{}, false
		}
		from += m
		if end, ok := t.which(v[from:], shown == t.owed); ok {
			return promptAt{end: end, from: from}, true
		}
	}
	return promptAt{}, false
}

// which says what the prompt-like text v ends, all the input's lines read
// or not (all): the continuation prompt ends a turn once all are read, and
// is no end otherwise, nor outside a turn; the prompt makes the child
// ready. ok is false when v is neither; true with endNone when it is a
// continuation prompt that ends nothing, which no other reading of the
// line may then take for the prompt.
func (t *Tracker) which(v []byte, all bool) (end lineEnd, ok bool) {
	switch {
	case t.m.isCont(v) && all && t.state == stTurn:
		return endIncomplete, true
	case t.m.isCont(v):
		return endNone, true
	case t.m.prompt.Match(v):
		return endReady, true
	}
	return endNone, false
}

// promptAfter hands on what comes before the prompt on the current line,
// the first head bytes of what shows (ln.shows), as the turn's answer (or
// as output of no turn): those of them still held. Those handed on before
// (flush, cut) stay handed on, and when the prompt began among them, what
// is held of it is the prompt.
func (t *Tracker) promptAfter(head int) {
	h := t.ln.heldOf(head)
	if h <= 0 { // handed on already, if anything (flush, cut)
		t.resolve(nil, false)
		return
	}
	t.resolve(t.ln.vis()[:h], false)
	t.ln.decide(clCRText) // the line goes on: no "\n" follows them
	k := t.ln.split(t.ln.upTo(h))
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
	t.ln.newLine()
	if t.state == stTurn {
		t.emit(End, t.hold, t.hold)
	}
	t.state, t.armed = stReady, false
	t.readies++
	t.endTurn()
	if t.onReady != nil {
		t.onReady()
	}
}

// incomplete ends the turn in progress at the continuation prompt, the
// current line: the child wants more input than the turn gave. The child
// stays busy (the caller interrupts it) until it shows its prompt again.
func (t *Tracker) incomplete() {
	t.release(len(t.ln.runs), Prompt)
	t.ln.newLine()
	t.emit(Incomplete, t.hold, t.hold)
	t.state, t.armed, t.fresh = stBusy, false, false
	t.endTurn()
}
