package turn

import "time"

// due does what has come by now: a child quiet at its prompt is ready (or,
// at its continuation prompt after the whole input, ends the turn as
// incomplete); a turn quiet for its own quiet time ends. Before output
// (more), the settle period must have passed, not just come: output at
// the instant it ends was not quiet for it, which matters when it is 0.
func (t *Tracker) due(now time.Time, more bool) {
	settled := t.last.Add(t.settle)
	if t.armed && (now.After(settled) || !more && now.Equal(settled)) && t.look() {
		return
	}
	if t.state == stTurn && t.turnQuiet > 0 && !now.Before(t.turnDeadline()) {
		t.ln.decide(clCRText)
		t.resolve(t.ln.vis, false)
		t.answer(len(t.ln.runs))
		t.groups = nil
		t.ready() // nothing is left to be the prompt
	}
}

// look takes the current line for what it is, the settle period over: the
// prompt makes the child ready, the continuation prompt after the whole
// input ends the turn as incomplete. It reports whether it did either.
func (t *Tracker) look() bool {
	t.armed = false
	at := t.atPrompt()
	switch at.end {
	case endReady:
		t.groups = t.m.groups(t.ln.vis[at.from:])
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
// ln.vis[from:], and the first head bytes of vis come before it on the
// line (output that did not end its line).
type promptAt struct {
	end        lineEnd
	head, from int
}

// atPrompt reports whether the child, quiet, shows its prompt: something
// other than echo came since its input, the echo is complete if it began,
// and the current line is the prompt, after as many prompts as the child
// may have shown for later lines of the input (">>> >>> " for "a=1\nb=2\n"
// on pipes), or else ends with it ("x" of "x>>> " after
// print("x", end="") comes before it).
func (t *Tracker) atPrompt() promptAt {
	if t.state != stBusy && t.state != stTurn {
		return promptAt{}
	}
	if !t.fresh && t.ln.n == 0 || t.state == stTurn && t.exp.pending() {
		return promptAt{}
	}
	if at, ok := t.promptLine(); ok {
		return at
	}
	v := t.ln.vis
	for n := min(len(v)-1, maxSuffix); n > 0; n-- {
		if end, ok := t.which(v[len(v)-n:], t.owed == 0); ok {
			return promptAt{end: end, head: len(v) - n, from: len(v) - n}
		}
	}
	return promptAt{}
}

// maxSuffix is the longest end of a line that is looked at for the prompt
// when the whole line is not it: prompts are short, and a long line must
// not cost a regular expression match per byte.
const maxSuffix = 64

// promptLine reports whether the current line is the prompt, after as many
// prompts as the child may have shown for later lines of the input, or the
// continuation prompt after all of them.
func (t *Tracker) promptLine() (promptAt, bool) {
	v, from := t.ln.vis, 0
	for shown := 0; ; shown++ {
		if end, ok := t.which(v[from:], shown == t.owed); ok {
			return promptAt{end: end, from: from}, true
		}
		if shown == t.owed || !t.ln.start {
			return promptAt{}, false
		}
		m := t.m.prefix(v[from:], maxOwedScan)
		if m == 0 {
			return promptAt{}, false
		}
		from += m
	}
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
// the first head bytes of what shows, as the turn's answer (or as output of
// no turn).
func (t *Tracker) promptAfter(head int) {
	if head == 0 {
		t.resolve(nil, false)
		return
	}
	t.resolve(t.ln.vis[:head], false)
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
	t.ln.start = true
	t.emit(Incomplete, t.hold, t.hold)
	t.state, t.armed, t.fresh = stBusy, false, false
	t.endTurn()
}
