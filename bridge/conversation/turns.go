//go:build linux

package conversation

import (
	"log/slog"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/turn"
)

// turns is the turn in progress and its asker, and the turn just ended
// while its asker's last frames are written: how a turn begins (its input
// written to the child, its asker served), what of the child's output it
// gets, and how it ends. Only these two askers have a reply FIFO open.
// Everything here runs under the conversation's lock (mu), which the
// askers' writers take too; room is on it.
type turns struct {
	mu    *sync.Mutex // the conversation's
	room  sync.Cond   // on mu: an asker's frames were taken, the turn changed, a stop began
	log   *slog.Logger
	rule  *bound.Rule     // how long writes to an asker wait
	wg    *sync.WaitGroup // the conversation's: Wait waits for the askers' goroutines
	note  *notices
	child *running
	input *inputs
	kept  *keptReply
	count *tally

	cur      *asker // the turn in progress, or nil
	last     *asker // the turn just ended, while its frames are written, or nil
	stopping bool   // a stop began: the child's output is no longer held up
	probeDue bool   // the loop will probe the child's prompt: the writer holds (hold.go)
	scratch  []byte // one call's answer
}

// free says whether a turn may begin, as far as the turns go: none is in
// progress or writing its last frames, and the agent is not stopping.
func (t *turns) free() bool { return t.cur == nil && t.last == nil && !t.stopping }

// busy says whether a turn is in progress or writing its last frames.
func (t *turns) busy() bool { return t.cur != nil || t.last != nil }

// begin starts the turn of w at now, with reply, its reply FIFO, open:
// the tracker is told, the input written, and the asker's writer and
// watch started.
func (t *turns) begin(w *waiting, reply *fifo.Reply, now time.Time) {
	a := &asker{t: t, req: w.req, accepted: w.accepted, reply: reply, w: t.rule.NewWriter(reply)}
	a.more.L = t.mu
	input := turn.Line([]byte(a.req.Input))
	t.handle(t.child.begin(input, a.req.Quiet, now)) // what is left before is no answer
	t.cur, a.begun = a, now
	t.input.write(input)
	a.serve()
}

// check interrupts the turn in progress when its asker went away or
// stopped reading, or it is past its time limit.
func (t *turns) check(now time.Time) {
	a := t.cur
	switch {
	case a == nil:
	case a.gone.Load():
		t.log.Info("turn interrupted: its ask went away", "id", a.req.ID)
		t.abandon(nil)
	case a.failed != nil:
		t.log.Info("turn interrupted: its asker lost it", "id", a.req.ID, "err", a.failed)
		t.abandon(nil)
	case expired(a.req, a.accepted, now):
		t.log.Info("turn interrupted: past its time limit", "id", a.req.ID, "limit", a.req.Limit)
		t.count.timedOut++
		t.abandon(protocol.AppendEnd(nil, a.req.ID, protocol.End{TimedOut: true, NotReady: t.child.notReady(now),
			DurationMS: since(a.begun, now)}))
	}
}

// expired says whether an ask accepted at accepted is past its limit at
// now: the limit counts from the ask, its wait included, as its asker's.
func expired(req protocol.ParsedAsk, accepted, now time.Time) bool {
	return req.Limit > 0 && !now.Before(accepted.Add(req.Limit))
}

// limit is when the turn in progress is past its time limit, if it has
// one.
func (t *turns) limit() (time.Time, bool) {
	if a := t.cur; a != nil && a.req.Limit > 0 {
		return a.accepted.Add(a.req.Limit), true
	}
	return time.Time{}, false
}

// handle passes the segments of the child's output the tracker settled to
// the turn in progress: its answer, in one frame, and its end.
func (t *turns) handle(segs []turn.Segment) {
	a := t.cur
	if a == nil {
		return
	}
	data := t.scratch[:0]
	for _, s := range segs {
		switch s.Kind {
		case turn.Answer:
			data = append(data, s.Data...)
		case turn.End, turn.Incomplete:
			a.answer(data)
			t.scratch = data[:0]
			t.endTurn(a, s.Kind, time.Now())
			return // what follows belongs to no turn
		}
	}
	a.answer(data)
	t.scratch = data[:0]
}

// endTurn ends a's turn at now, as the tracker says (kind): at the child's
// prompt (End), with the prompt's named groups and status in its end
// frame, or at its continuation prompt after the whole input (Incomplete):
// the child wants more than the turn gave, and is interrupted back to its
// prompt, which the next turn waits for.
func (t *turns) endTurn(a *asker, kind turn.Kind, now time.Time) {
	e := protocol.End{DurationMS: since(a.begun, now)}
	if kind == turn.Incomplete {
		t.log.Info("turn incomplete: the child asks for more input; interrupting it", "id", a.req.ID)
		t.count.incomplete++
		e.Incomplete = true
		t.finish(protocol.AppendEnd(nil, a.req.ID, e))
		t.child.markIncomplete(now, a.req.Input)
		t.input.interrupt()
		return
	}
	t.count.answered++
	t.child.endOf(&e)
	t.finish(protocol.AppendEnd(nil, a.req.ID, e))
}

// exited ends the turn in progress, if any, with the exit frame of its
// child, which ended with st at now.
func (t *turns) exited(st child.ExitStatus, now time.Time) {
	if a := t.cur; a != nil {
		t.finish(protocol.AppendExit(nil, a.req.ID, protocol.Exit{Code: st.Code(),
			Signal: child.SignalName(st.Signal()), DurationMS: since(a.begun, now)}))
	}
}

// fail ends the turn in progress, if any, with an error frame: err.
func (t *turns) fail(err error) {
	if a := t.cur; a != nil {
		t.finish(errorFrame(a.req.ID, err))
	}
	t.room.Broadcast()
}

// finish ends the turn in progress with its last frame: its asker becomes
// the last one until its frames are written.
func (t *turns) finish(last []byte) {
	a := t.cur
	t.cur, t.probeDue = nil, false
	a.flushPartial()
	if last != nil {
		a.push(last)
	}
	a.done = true
	a.more.Broadcast()
	t.last = a
	t.room.Broadcast()
	t.note.activity()
	t.note.poke()
}

// abandon interrupts the turn in progress: what the child writes until it
// is ready again is dropped, the child is interrupted, and the next turn
// waits until it shows its prompt again.
func (t *turns) abandon(last []byte) {
	t.handle(t.child.abandon())
	t.finish(last)
	t.child.markUnready(time.Now())
	t.input.interrupt()
}

// stop says the agent's stop began: the child's output is no longer held
// up for an asker, and no turn begins.
func (t *turns) stop() {
	t.stopping = true
	t.probed()
	t.room.Broadcast()
}

// whyWaiting says why the waiting asks have not begun: the child has not
// been ready since it started or was interrupted (notReady, when not ""),
// a turn ahead of them has not ended, no child runs, or the child has
// shown no prompt since its last turn or input.
func (t *turns) whyWaiting(notReady string) string {
	switch {
	case notReady != "":
		return notReady
	case t.cur != nil:
		return "the turn ahead of it was still running"
	case t.last != nil:
		return "the turn ahead of it was still writing its last frames"
	case t.child.tracker == nil:
		return "no child was running: it waited for the child's restart"
	}
	return "the child has shown no prompt since its last turn or input"
}
