package turn

import (
	"time"

	"github.com/fifobridge/fifobridge/internal/ttytext"
)

// state is where the child is in its turns.
type state uint8

const (
	stBusy   state = iota // no turn: starting, given typed input, or interrupted
	stTurn                // answering a turn
	stReady               // showing its prompt
	stClosed              // its output ended
)

// Tracker follows one child's turns. Its methods take the child's output
// and what the caller does to the child, and return the output they could
// settle, as segments in output order.
type Tracker struct {
	m        matcher
	settle   time.Duration
	terminal bool
	echo     echoMode // where the input's echo is looked for
	onReady  func()   // Config.Ready, or nil

	state state
	buf   []byte // the bytes of this call, the current line's at buf[hold:]
	hold  int
	ln    line
	esc   ttytext.Escape // where the line is in an escape sequence
	spans []span
	segs  []Segment

	last  time.Time // when output last came
	armed bool      // output came since the prompt was last looked for
	fresh bool      // a line other than echo came since the last input

	// What the child showed.
	readies int     // times it became ready
	groups  []Group // the named groups of the prompt that last made it ready
	atKnown bool    // atOK and unOK are AtPrompt's and Unfinished's answers, until the next call that can change them
	atOK    bool
	unOK    bool

	// The turn in progress.
	exp       echoExpect
	owed      int // prompts the child may still show for the input's later lines
	owedLook  int // answer lines still to be searched for them
	turnQuiet time.Duration
	begun     time.Time
}

// Output takes p, bytes the child wrote, at now; p is not kept or changed.
// It first does what Tick(now) would, but for a settle period that ends at
// now: a prompt shown before p that has been quiet longer than the settle
// period is taken before p is read.
func (t *Tracker) Output(p []byte, now time.Time) []Segment {
	t.begin()
	t.due(now, len(p) > 0)
	if len(p) == 0 {
		return t.result()
	}
	from := len(t.buf)
	t.buf = append(t.buf, p...)
	if t.state == stClosed {
		t.emit(Discarded, from, len(t.buf))
		t.hold = len(t.buf)
		return t.result()
	}
	t.scan(from)
	t.last = now
	t.armed = t.state == stBusy || t.state == stTurn
	return t.result()
}

// Tick tells the tracker the time is now: the caller calls it once Deadline
// has come. A child quiet for the settle period at its prompt becomes
// ready, which ends the turn in progress (its last segment is End); so
// does a turn's own quiet time. At its continuation prompt after the whole
// input, the turn ends as Incomplete instead, and the child stays busy.
func (t *Tracker) Tick(now time.Time) []Segment {
	t.begin()
	t.due(now, false)
	return t.result()
}

// Deadline is when Tick is to be called next, if at all. It changes only
// when a method is called.
func (t *Tracker) Deadline() (time.Time, bool) {
	var d time.Time
	ok := false
	if t.armed {
		d, ok = t.last.Add(t.settle), true
	}
	if t.state == stTurn && t.turnQuiet > 0 {
		if q := t.turnDeadline(); !ok || q.Before(d) {
			d, ok = q, true
		}
	}
	return d, ok
}

// Begin starts a turn at now: the caller is about to write input to the
// child, which should end with a newline (Line). With quiet > 0 the turn
// also ends after quiet with no output. What the child wrote before and
// that is still held is Discarded, and so is a turn in progress. Begin is
// for a ready child; one that is not is taken as ready (after an
// interrupted turn whose child never showed its prompt again). A closed
// tracker stays closed.
func (t *Tracker) Begin(input []byte, quiet time.Duration, now time.Time) []Segment {
	t.begin()
	if t.state == stClosed {
		return t.result()
	}
	t.release(len(t.ln.runs), Discarded)
	t.ln.newLine()
	t.state, t.begun, t.turnQuiet = stTurn, now, max(quiet, 0)
	t.fresh, t.armed, t.groups = false, false, nil
	t.exp.reset(input, t.echo != echoNever, t.terminal)
	t.owed, t.owedLook = max(t.exp.count()-1, 0), maxOwedLines
	return t.result()
}

// Typed tells the tracker that input outside any turn was written to the
// child (bytes from the input FIFO): the child is busy until it shows its
// prompt again. A turn in progress goes on, the typed input's echo and its
// answer now part of it; its unfinished last line, which the input may
// answer (a question the settle period had not yet handed on), is handed
// on now, as the settle period would have.
func (t *Tracker) Typed() []Segment {
	t.begin()
	switch t.state {
	case stClosed:
		return nil
	case stReady:
		t.state = stBusy
	case stTurn:
		t.flush()
	}
	t.fresh, t.armed = false, false
	return t.result()
}

// Abandon ends the turn in progress without an End (the caller interrupts
// the child): what is held of it, and all the child writes until it is
// ready again, is Discarded.
func (t *Tracker) Abandon() []Segment {
	t.begin()
	if t.state == stTurn {
		t.release(len(t.ln.runs), Discarded)
		t.ln.newLine()
		t.state, t.fresh, t.armed = stBusy, false, false
		t.endTurn()
	}
	return t.result()
}

// EOF tells the tracker the child's output ended: what is held is handed
// back, as Answer when a turn is in progress (without End: the caller says
// how the child ended). The tracker is then closed: output given later is
// Discarded. A restarted child gets a new Tracker.
func (t *Tracker) EOF() []Segment {
	t.begin()
	if t.state == stClosed {
		return t.result()
	}
	t.ln.decide(clCRText)
	if t.state == stTurn {
		t.resolve(t.ln.vis(), false)
		t.answer(len(t.ln.runs))
	}
	t.release(len(t.ln.runs), Discarded)
	t.ln.newLine()
	t.state, t.armed = stClosed, false
	t.endTurn()
	return t.result()
}

// Ready reports whether the child is ready for a turn.
func (t *Tracker) Ready() bool { return t.state == stReady }

// InTurn reports whether a turn is in progress.
func (t *Tracker) InTurn() bool { return t.state == stTurn }

// Closed reports whether EOF was called.
func (t *Tracker) Closed() bool { return t.state == stClosed }

// endTurn forgets the turn in progress.
func (t *Tracker) endTurn() {
	t.exp.reset(nil, false, false)
	t.owed, t.owedLook, t.turnQuiet = 0, 0, 0
}
