//go:build linux

package conversation

import (
	"regexp"
	"time"

	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/status"
	"github.com/fifobridge/fifobridge/turn"
)

// running is the child a conversation follows now, as its turns see it:
// its turn tracker, fed every byte the child writes, the tracker's clock,
// its Reader (probe.go) and when it last stopped being ready
// (notready.go). Between children it has no tracker: what reads the
// tracker then does nothing, but begin, abandon and endOf, which only a
// turn in progress calls (and a turn runs only with a child). Under the
// conversation's lock; it starts, opens and writes nothing.
type running struct {
	prompt   *regexp.Regexp // -prompt, as the status file quotes it
	tracker  *turn.Tracker  // the running child's; nil between children
	clock    outputClock    // the tracker's clock
	reader   Reader         // the running child's, or nil: -settle alone decides
	children uint64         // children started: the running one's number
	outputs  uint64         // calls of the tracker's Output: what it saw
	unready  unready        // when the child last stopped being ready outside a turn
}

// start follows a new child with tr, busy until its first prompt.
func (r *running) start(tr *turn.Tracker, now time.Time) {
	r.tracker, r.clock, r.reader = tr, outputClock{}, nil
	r.children++
	r.unready = unready{since: status.SinceStart, at: now}
}

// end says the child ended: none runs until start.
func (r *running) end() { r.tracker, r.reader = nil, nil }

// reading gives the running child its Reader; it says whether a child
// runs to take it.
func (r *running) reading(rd Reader) bool {
	if r.tracker == nil {
		return false
	}
	r.reader = rd
	return true
}

// ready says whether a child runs and is ready for a turn.
func (r *running) ready() bool { return r.tracker != nil && r.tracker.Ready() }

// readied says whether the running child has been ready since it started.
func (r *running) readied() bool { return r.tracker != nil && r.tracker.Readies() > 0 }

// typed says bytes of the input FIFO went to the child, and returns what
// the tracker handed on of the turn's unfinished line.
func (r *running) typed() []turn.Segment {
	if r.tracker == nil {
		return nil
	}
	return r.tracker.Typed()
}

// output gives the tracker p, the child's output read at now, and
// returns what it settled.
func (r *running) output(p []byte, now time.Time) []turn.Segment {
	r.outputs++
	if r.tracker == nil {
		return nil
	}
	return r.tracker.Output(p, r.clock.at(now))
}

// eof says the child's output ended, and returns what the tracker held.
func (r *running) eof() []turn.Segment {
	if r.tracker == nil {
		return nil
	}
	return r.tracker.EOF()
}

// tick returns what the tracker settles at now, its quiet time passed;
// nothing while the child's output is held up.
func (r *running) tick(now time.Time) []turn.Segment {
	if r.tracker == nil || r.clock.held() {
		return nil
	}
	return r.tracker.Tick(r.clock.at(now))
}

// deadline is when tick has something to settle; none while the child's
// output is held up.
func (r *running) deadline() (time.Time, bool) {
	if r.tracker == nil || r.clock.held() {
		return time.Time{}, false
	}
	d, ok := r.tracker.Deadline()
	return r.clock.real(d), ok
}

// begin starts a turn whose input is input at now, and returns what the
// tracker held of the output before it, which is no answer.
func (r *running) begin(input []byte, quiet time.Duration, now time.Time) []turn.Segment {
	return r.tracker.Begin(input, quiet, r.clock.at(now))
}

// abandon drops the turn in progress, and returns what the tracker held.
func (r *running) abandon() []turn.Segment { return r.tracker.Abandon() }

// endOf puts into e what the prompt that ended the turn showed: its
// named groups, and its status.
func (r *running) endOf(e *protocol.End) {
	for _, g := range r.tracker.Groups() {
		e.Prompt = append(e.Prompt, protocol.PromptGroup{Name: g.Name, Text: g.Text})
	}
	if n, ok := r.tracker.Status(); ok {
		e.Status = &n
	}
}

// outputClock is the tracker's clock: the time less every while the
// child's output was held up for an asker, so that a child kept waiting
// is not taken for a quiet one.
type outputClock struct {
	heldFor time.Duration // the whiles held up so far
	since   time.Time     // when the current one began; zero: none
}

// at is the tracker's time at now.
func (k *outputClock) at(now time.Time) time.Time {
	if !k.since.IsZero() {
		now = k.since
	}
	return now.Add(-k.heldFor)
}

// real is the time at which the tracker's clock shows t, while the
// output is not held up.
func (k *outputClock) real(t time.Time) time.Time { return t.Add(k.heldFor) }

func (k *outputClock) held() bool { return !k.since.IsZero() }

func (k *outputClock) hold(now time.Time) { k.since = now }

func (k *outputClock) release(now time.Time) {
	k.heldFor += now.Sub(k.since)
	k.since = time.Time{}
}
