//go:build linux

package conversation

import (
	"errors"
	"io/fs"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// waiting is an accepted ask before its turn: its request alone. It holds
// no descriptor and no goroutine; its reply FIFO is opened when its turn
// starts, or to answer it at once.
type waiting struct {
	req      protocol.ParsedAsk
	accepted time.Time
}

// enqueue takes an accepted ask, whose reply FIFO the caller opened; it
// fails when no child will answer, or when MaxQueued wait already. When
// the child is ready and no other ask waits or has its turn (or its last
// frames written), the ask's turn begins at once with reply, which the
// conversation then keeps (kept): it is not opened a second time, nor
// left for the loop to begin. Otherwise the ask waits, holding nothing;
// the caller closes reply.
func (c *Conversation) enqueue(req protocol.ParsedAsk, reply *fifo.Reply) (kept bool, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended != nil {
		return false, c.ended
	}
	now := time.Now()
	w := &waiting{req: req, accepted: now}
	if c.queue.Len() == 0 && c.turn.free() && c.child.ready() && !expired(req, now, now) {
		c.note.activity()
		c.turn.begin(w, reply, now)
		c.note.wakeLoop() // for the turn's limit and quiet time
		c.note.poke()
		return true, nil
	}
	if !c.queue.Put(w) {
		return false, errTooMany
	}
	c.note.activity()
	c.note.wakeLoop()
	c.note.poke()
	return false, nil
}

// open opens the reply FIFO of w, whose turn starts, or returns nil
// when the asker went away (nobody reads its FIFO, or it is gone) or the
// FIFO cannot be used; such an ask is dropped, and the child never sees
// it.
func (c *Conversation) open(w *waiting) *fifo.Reply {
	reply, err := c.kept.open(w.req.Reply)
	switch {
	case err == nil:
		return reply
	case errors.Is(err, fifo.ErrNoReader), errors.Is(err, fs.ErrNotExist):
		c.cfg.Log.Info("ask dropped at its turn: its asker went away", "id", w.req.ID)
	default:
		c.cfg.Log.Warn("ask dropped at its turn: its reply fifo cannot be opened", "id", w.req.ID, "err", err)
		if !answer.NotAReply(err) {
			answer.DropUnanswerable(c.cfg.Log, c.cfg.Replies, w.req.Reply, err)
		}
	}
	return nil
}

// startNext starts the first waiting ask whose asker is still there, once
// the child is ready and the last asker's frames are written. A child
// that was interrupted is ready only once it shows its prompt again.
func (c *Conversation) startNext(now time.Time) {
	for c.turn.free() && c.child.ready() && c.queue.Len() > 0 {
		w := c.queue.Pop()
		if reply := c.open(w); reply != nil {
			c.turn.begin(w, reply, now)
		}
		c.note.poke()
	}
}

// expireWaiting answers the waiting asks past their time limit with their
// end frame (timed out, queued), without a turn: nothing of theirs was
// written to the child, and no turn is interrupted for them.
func (c *Conversation) expireWaiting(now time.Time) {
	for _, w := range c.queue.Remove(func(w *waiting) bool { return expired(w.req, w.accepted, now) }) {
		notReady := c.child.notReady(now)
		c.cfg.Log.Info("ask gave up while queued: nothing was sent to the child", "id", w.req.ID, "limit", w.req.Limit,
			"why", c.turn.whyWaiting(notReady))
		c.count.timedOut++
		c.answerNow(w.req, protocol.AppendEnd(nil, w.req.ID, protocol.End{TimedOut: true, Queued: true, NotReady: notReady,
			DurationMS: since(w.accepted, now)}))
		c.note.poke()
	}
}

// endAll answers every waiting ask with err, and every later one.
func (c *Conversation) endAll(err error) {
	if c.ended == nil {
		c.ended = err
	}
	c.kept.refuse()
	for _, w := range c.queue.Drain() {
		c.cfg.Log.Info("ask refused", "id", w.req.ID, "err", err)
		c.answerNow(w.req, errorFrame(w.req.ID, err))
	}
}

// answerNow writes frame, at most PIPE_BUF bytes, to the reply FIFO of req
// without waiting, and closes it: a frame nobody can take at once is
// dropped, as is one for an asker that went away.
func (c *Conversation) answerNow(req protocol.ParsedAsk, frame []byte) {
	reply, err := fifo.OpenReply(c.cfg.Replies, req.Reply)
	if err != nil {
		c.cfg.Log.Info("ask's last frame dropped: its asker went away", "id", req.ID, "err", err)
		return
	}
	defer reply.Close()
	if err := answer.WriteNow(reply, frame); err != nil {
		c.cfg.Log.Warn("ask's last frame dropped: its reply fifo takes nothing", "id", req.ID, "err", err)
	}
}

// errorFrame is the error frame of ask id.
func errorFrame(id string, err error) []byte { return answer.ErrorFrame(id, err) }
