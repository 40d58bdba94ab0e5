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
	if c.queue.Len() == 0 && c.cur == nil && c.last == nil && !c.stopping && c.child.ready() &&
		!expired(req, now, now) {
		c.activity()
		c.begin(c.newAsker(w, reply), now)
		c.wakeLoop() // for the turn's limit and quiet time
		c.poke()
		return true, nil
	}
	if !c.queue.Put(w) {
		return false, errTooMany
	}
	c.activity()
	c.wakeLoop()
	c.poke()
	return false, nil
}

// open opens the reply FIFO of w, whose turn starts: its asker, or nil
// when the asker went away (nobody reads its FIFO, or it is gone) or the
// FIFO cannot be used; such an ask is dropped, and the child never sees
// it.
func (c *Conversation) open(w *waiting) *asker {
	reply, err := c.kept.open(w.req.Reply)
	switch {
	case err == nil:
		return c.newAsker(w, reply)
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

// expireWaiting answers the waiting asks past their time limit with their
// end frame (timed out, queued), without a turn: nothing of theirs was
// written to the child, and no turn is interrupted for them.
func (c *Conversation) expireWaiting(now time.Time) {
	for _, w := range c.queue.Remove(func(w *waiting) bool { return expired(w.req, w.accepted, now) }) {
		notReady := c.child.notReady(now)
		c.cfg.Log.Info("ask gave up while queued: nothing was sent to the child", "id", w.req.ID, "limit", w.req.Limit,
			"why", c.whyWaiting(notReady))
		c.timedOut++
		c.answerNow(w.req, protocol.AppendEnd(nil, w.req.ID, protocol.End{TimedOut: true, Queued: true, NotReady: notReady,
			DurationMS: since(w.accepted, now)}))
		c.poke()
	}
}

// whyWaiting says why the waiting asks have not begun: the child has not
// been ready since it started or was interrupted (notReady, when not ""),
// a turn ahead of them has not ended, no child runs, or the child has
// shown no prompt since its last turn or input. Under c.mu.
func (c *Conversation) whyWaiting(notReady string) string {
	switch {
	case notReady != "":
		return notReady
	case c.cur != nil:
		return "the turn ahead of it was still running"
	case c.last != nil:
		return "the turn ahead of it was still writing its last frames"
	case c.child.tracker == nil:
		return "no child was running: it waited for the child's restart"
	}
	return "the child has shown no prompt since its last turn or input"
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
