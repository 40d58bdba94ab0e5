package turn

import "time"

// AtPrompt reports whether the child shows the prompt that ends its
// busyness, as the tracker would take it once the settle period passed
// with no more output: its prompt (it would become ready), or its
// continuation prompt after the whole input (the turn would end as
// Incomplete). It is false once that has happened. A caller that sees
// sooner that the child waits for input (the reader of its input blocked
// reading it) calls Settle. AtPrompt changes nothing; its answer is kept
// until the next call of another method.
func (t *Tracker) AtPrompt() bool {
	t.know()
	return t.atOK
}

// Unfinished reports whether the turn in progress has an unfinished last
// line that is not the prompt, which the tracker hands on to the answer
// once the settle period passed with no more output: the question of a
// command that waits for input ("Enter name: "), or output that pauses
// before its newline. A caller that sees sooner that the child waits for
// input calls Settle. Unfinished changes nothing; its answer is kept
// until the next call of another method. It is false while AtPrompt is
// true.
func (t *Tracker) Unfinished() bool {
	t.know()
	return t.unOK
}

// know works out AtPrompt's and Unfinished's answers, unless known.
func (t *Tracker) know() {
	if t.atKnown {
		return
	}
	t.atOK, t.unOK = false, false
	if t.armed {
		t.atOK = t.atPrompt().end != endNone
		t.unOK = !t.atOK && t.unfinished()
	}
	t.atKnown = true
}

// Settle does what Tick(now) would and then takes the current line at
// once, as if the settle period had passed: when AtPrompt holds, the
// child becomes ready (a turn in progress ends with End) or the turn ends
// as Incomplete; when Unfinished holds, the line is handed on, and the
// turn goes on. Otherwise it is Tick(now).
func (t *Tracker) Settle(now time.Time) []Segment {
	t.begin()
	t.due(now, false)
	if t.armed {
		t.settled()
	}
	return t.result()
}

// Readies is how many times the child has become ready since New: the
// caller that notes it when a turn begins or is abandoned knows later
// whether the child has been ready since (0: never since its start).
func (t *Tracker) Readies() int { return t.readies }

// Groups returns the named groups of the prompt expression that took part
// in its match of the prompt that last made the child ready, in the
// expression's order, each name once. It is nil after Begin, and when the
// child was taken as ready without a prompt (a turn's quiet time) or the
// expression has no named groups. The slice is the Tracker's: read it
// before the next call.
func (t *Tracker) Groups() []Group { return t.groups }

// Status returns the number the group named "status" (StatusGroup)
// matched in that prompt, when it matched ASCII digits only and their
// value fits an int: for a shell with $? in its prompt, the status of the
// command the turn ran.
func (t *Tracker) Status() (int, bool) { return statusOf(t.groups) }

// MaxLastLine is the most LastLine returns.
const MaxLastLine = 80

// LastLine returns what the child's last line shows, with carriage
// returns and escape sequences removed: the current line if it shows
// anything, else the last one that did (its prompt once it is ready), at
// most its last MaxLastLine bytes, begun at a UTF-8 character's start if
// cut. It is for naming a child that does not become ready. The slice is
// the Tracker's: read it before the next call.
func (t *Tracker) LastLine() []byte {
	if len(t.ln.text) > 0 {
		return lastOf(t.ln.text)
	}
	return t.ln.last
}
