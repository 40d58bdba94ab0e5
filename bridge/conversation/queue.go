//go:build linux

package conversation

import (
	"errors"
	"io/fs"
	"log/slog"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
)

// waiting is an accepted ask before its turn: its request alone. It holds
// no descriptor and no goroutine; its reply FIFO is opened when its turn
// starts, or to answer it at once.
type waiting struct {
	req      protocol.ParsedAsk
	accepted time.Time
}

// askQueue is the asks waiting for their turn, in arrival order, at most
// MaxQueued: how an accepted ask waits, when the first one begins its
// turn, and how one past its limit, or one no child will answer, is
// answered at once without a turn. Under the conversation's lock.
type askQueue struct {
	log     *slog.Logger
	replies *sharedir.Dir // DIR/replies, where an ask's last frame is written at once
	note    *notices
	kept    *keptReply
	turn    *turns
	child   *running
	count   *tally

	waiting *bound.Queue[*waiting]
	ended   error // set when no child will answer again: asks get this
}

// enqueue takes an ask accepted at now, whose reply FIFO the caller
// opened; it fails when no child will answer, or when MaxQueued wait
// already. When the child is ready and no other ask waits or has its
// turn (or its last frames written), the ask's turn begins at once with
// reply, which the turn then keeps (kept): it is not opened a second
// time, nor left for the loop to begin. Otherwise the ask waits, holding
// nothing; the caller closes reply.
func (q *askQueue) enqueue(req protocol.ParsedAsk, reply *fifo.Reply, now time.Time) (kept bool, err error) {
	if q.ended != nil {
		return false, q.ended
	}
	w := &waiting{req: req, accepted: now}
	if q.waiting.Len() == 0 && q.turn.free() && q.child.ready() && !expired(req, now, now) {
		q.note.activity()
		q.turn.begin(w, reply, now)
		q.note.wakeLoop() // for the turn's limit and quiet time
		q.note.poke()
		return true, nil
	}
	if !q.waiting.Put(w) {
		return false, errTooMany
	}
	q.note.activity()
	q.note.wakeLoop()
	q.note.poke()
	return false, nil
}

// len is how many asks wait.
func (q *askQueue) len() int { return q.waiting.Len() }

// startNext starts the first waiting ask whose asker is still there, once
// the child is ready and the last asker's frames are written. A child
// that was interrupted is ready only once it shows its prompt again.
func (q *askQueue) startNext(now time.Time) {
	for q.turn.free() && q.child.ready() && q.waiting.Len() > 0 {
		w := q.waiting.Pop()
		if reply := q.open(w); reply != nil {
			q.turn.begin(w, reply, now)
		}
		q.note.poke()
	}
}

// open opens the reply FIFO of w, whose turn starts, or returns nil
// when the asker went away (nobody reads its FIFO, or it is gone) or the
// FIFO cannot be used; such an ask is dropped, and the child never sees
// it.
func (q *askQueue) open(w *waiting) *fifo.Reply {
	reply, err := q.kept.open(w.req.Reply)
	switch {
	case err == nil:
		return reply
	case errors.Is(err, fifo.ErrNoReader), errors.Is(err, fs.ErrNotExist):
		q.log.Info("ask dropped at its turn: its asker went away", "id", w.req.ID)
	default:
		q.log.Warn("ask dropped at its turn: its reply fifo cannot be opened", "id", w.req.ID, "err", err)
		if !answer.NotAReply(err) {
			answer.DropUnanswerable(q.log, q.replies, w.req.Reply, err)
		}
	}
	return nil
}

// expire answers the waiting asks past their time limit at now with
// their end frame (timed out, queued), without a turn: nothing of theirs
// was written to the child, and no turn is interrupted for them.
func (q *askQueue) expire(now time.Time) {
	for _, w := range q.waiting.Remove(func(w *waiting) bool { return expired(w.req, w.accepted, now) }) {
		notReady := q.child.notReady(now)
		q.log.Info("ask gave up while queued: nothing was sent to the child", "id", w.req.ID, "limit", w.req.Limit,
			"why", q.turn.whyWaiting(notReady))
		q.count.timedOut++
		q.answerNow(w.req, protocol.AppendEnd(nil, w.req.ID, protocol.End{TimedOut: true, Queued: true, NotReady: notReady,
			DurationMS: since(w.accepted, now)}))
		q.note.poke()
	}
}

// limits gives take the time limit of every waiting ask that has one.
func (q *askQueue) limits(take func(time.Time, bool)) {
	q.waiting.Each(func(w *waiting) {
		take(w.accepted.Add(w.req.Limit), w.req.Limit > 0)
	})
}

// endAll answers every waiting ask with err, and every later one; no
// reply FIFO is kept from now on.
func (q *askQueue) endAll(err error) {
	if q.ended == nil {
		q.ended = err
	}
	q.kept.refuse()
	for _, w := range q.waiting.Drain() {
		q.log.Info("ask refused", "id", w.req.ID, "err", err)
		q.answerNow(w.req, errorFrame(w.req.ID, err))
	}
}

// answerNow writes frame, at most PIPE_BUF bytes, to the reply FIFO of req
// without waiting, and closes it: a frame nobody can take at once is
// dropped, as is one for an asker that went away.
func (q *askQueue) answerNow(req protocol.ParsedAsk, frame []byte) {
	reply, err := fifo.OpenReply(q.replies, req.Reply)
	if err != nil {
		q.log.Info("ask's last frame dropped: its asker went away", "id", req.ID, "err", err)
		return
	}
	defer reply.Close()
	if err := answer.WriteNow(reply, frame); err != nil {
		q.log.Warn("ask's last frame dropped: its reply fifo takes nothing", "id", req.ID, "err", err)
	}
}

// errorFrame is the error frame of ask id.
func errorFrame(id string, err error) []byte { return answer.ErrorFrame(id, err) }
