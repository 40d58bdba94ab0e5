package stream

import (
	"errors"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/status"
	"github.com/fifobridge/fifobridge/turn"
)

// conversation is the turn loop of -prompt: it follows the stream child's
// turns with a turn.Tracker fed by every byte the child writes, and serves
// asks one at a time in arrival order, each once the child is ready.
//
// Guarantees:
//
//   - A turn's input is written whole to the child, never in the middle
//     of a chunk moved from the input FIFO (writeInput shares its writer).
//   - An ask gets only its own turn's answer: the output of an
//     interrupted turn (timed out, or its ask went away) is discarded
//     until the child shows its prompt again, and the next turn starts
//     only then, or after -stop-timeout.
//   - Every ask accepted gets exactly one last frame: end, exit (its child
//     ended during the turn) or error (the child ended for good, or the
//     agent stops first); nothing waits for an ask's reader.
//
// One goroutine (loop) owns time: it ticks the tracker, ends turns past
// their limit and starts the next. The copy of the child's output and the
// accept loop call in under mu.
type conversation struct {
	nextID     uint64 // ids given to asks that came without one; the ask reader's own
	cfg        *Config
	writeInput func(p []byte) error // a turn's input, whole, to the current child
	interrupt  func()               // interrupts the child's foreground work
	poke       func()               // the status changed

	wake chan struct{} // poked when the loop has something to look at

	mu         sync.Mutex
	tracker    *turn.Tracker // the running child's; nil between children
	queue      []*askTurn
	cur        *askTurn
	recovering time.Time // after an interrupted turn: the next waits until ready, or this
	ended      error     // set when no child will answer again: asks get this
	answered   uint64
	timedOut   uint64

	inputs  sync.WaitGroup         // input writes under way
	replies sync.WaitGroup         // reply writers and watches
	live    map[*askReply]struct{} // reply writers not yet finished, for giveUpReplies
}

// askTurn is one accepted ask.
type askTurn struct {
	req   protocol.ParsedAsk
	out   *askReply
	begun time.Time
}

func newConversation(cfg *Config, writeInput func([]byte) error, interrupt, poke func()) *conversation {
	return &conversation{cfg: cfg, writeInput: writeInput, interrupt: interrupt, poke: poke,
		wake: make(chan struct{}, 1), live: map[*askReply]struct{}{}}
}

// loop runs the turns until done is closed.
func (c *conversation) loop(done <-chan struct{}) {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	for {
		next, ok := c.step(time.Now())
		t.Stop()
		if ok {
			t.Reset(max(time.Until(next), 0))
		}
		select {
		case <-done:
			return
		case <-c.wake:
		case <-t.C:
		}
	}
}

// step does what is due at now, and says when to look again.
func (c *conversation) step(now time.Time) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tracker != nil {
		c.handle(c.tracker.Tick(now))
	}
	c.dropVanished()
	if a := c.cur; a != nil {
		switch {
		case a.out.vanished():
			c.cfg.Log.Info("turn interrupted: its ask went away", "id", a.req.ID)
			c.abandon(now, nil)
		case a.req.Limit > 0 && !now.Before(a.begun.Add(a.req.Limit)):
			c.cfg.Log.Info("turn interrupted: past its time limit", "id", a.req.ID, "limit", a.req.Limit)
			c.timedOut++
			c.abandon(now, protocol.AppendEnd(nil, a.req.ID, protocol.End{TimedOut: true, DurationMS: since(a.begun, now)}))
		}
	}
	c.startNext(now)
	return c.nextLook()
}

// startNext starts the first queued ask when the child is ready for it.
func (c *conversation) startNext(now time.Time) {
	if c.cur != nil || len(c.queue) == 0 || c.tracker == nil || c.tracker.Closed() {
		return
	}
	if !c.tracker.Ready() && (c.recovering.IsZero() || now.Before(c.recovering)) {
		return
	}
	a := c.queue[0]
	c.queue[0] = nil
	c.queue = c.queue[1:]
	c.cur, c.recovering, a.begun = a, time.Time{}, now
	input := turn.Line([]byte(a.req.Input))
	c.handle(c.tracker.Begin(input, a.req.Quiet, now))
	c.send(input)
	c.poke()
}

// send writes input to the child, without holding up the loop.
func (c *conversation) send(input []byte) {
	c.inputs.Add(1)
	go func() {
		defer c.inputs.Done()
		if err := c.writeInput(input); err != nil {
			c.cfg.Log.Warn("a turn's input was not delivered", "err", err)
		}
	}()
}

// nextLook is when the loop looks again: the tracker's deadline, the turn's
// limit, the end of a recovery an ask waits for.
func (c *conversation) nextLook() (time.Time, bool) {
	var next time.Time
	ok := false
	take := func(t time.Time) {
		if !ok || t.Before(next) {
			next, ok = t, true
		}
	}
	if c.tracker != nil {
		if d, has := c.tracker.Deadline(); has {
			take(d)
		}
	}
	if c.cur != nil && c.cur.req.Limit > 0 {
		take(c.cur.begun.Add(c.cur.req.Limit))
	}
	if !c.recovering.IsZero() && len(c.queue) > 0 {
		take(c.recovering)
	}
	return next, ok
}

// handle passes the segments of the child's output the tracker settled to
// the turn in progress: its answer, and its end.
func (c *conversation) handle(segs []turn.Segment) {
	for _, s := range segs {
		a := c.cur
		if a == nil {
			continue
		}
		switch s.Kind {
		case turn.Answer:
			a.out.send(protocol.AppendData(nil, a.req.ID, protocol.FrameAnswer, s.Data))
		case turn.End:
			c.answered++
			c.finish(protocol.AppendEnd(nil, a.req.ID, protocol.End{DurationMS: since(a.begun, time.Now())}))
		}
	}
}

// finish ends the turn in progress with its last frame.
func (c *conversation) finish(last []byte) {
	a := c.cur
	c.cur = nil
	if last != nil {
		a.out.send(last)
	}
	a.out.finish()
	c.poke()
}

// abandon interrupts the turn in progress: its answer so far is dropped,
// the child is interrupted, and the next turn waits until it is ready.
func (c *conversation) abandon(now time.Time, last []byte) {
	c.handle(c.tracker.Abandon())
	c.finish(last)
	c.recovering = now.Add(c.cfg.StopTimeout)
	c.interrupt()
}

// dropVanished forgets queued asks whose reader went away.
func (c *conversation) dropVanished() {
	kept := c.queue[:0]
	for _, a := range c.queue {
		if a.out.vanished() {
			c.cfg.Log.Info("ask dropped before its turn: it went away", "id", a.req.ID)
			a.out.finish()
			continue
		}
		kept = append(kept, a)
	}
	clear(c.queue[len(kept):])
	c.queue = kept
}

// enqueue takes an accepted ask; it fails when no child will answer.
func (c *conversation) enqueue(a *askTurn) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ended != nil {
		return c.ended
	}
	c.queue = append(c.queue, a)
	c.wakeLoop()
	c.poke()
	return nil
}

// track registers an ask's reply writer until it finished.
func (c *conversation) track(r *askReply) {
	c.mu.Lock()
	c.live[r] = struct{}{}
	c.mu.Unlock()
	c.replies.Add(1)
	go func() {
		defer c.replies.Done()
		<-r.closed
		c.mu.Lock()
		delete(c.live, r)
		c.mu.Unlock()
	}()
}

// giveUpReplies ends the reply writes still blocked: the agent stops.
func (c *conversation) giveUpReplies() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for r := range c.live {
		c.cfg.Log.Warn("giving up on an ask whose reader does not read", "id", r.id)
		r.giveUp()
	}
}

func since(t, now time.Time) int64 { return now.Sub(t).Milliseconds() }

// errNoChild is what queued asks get when the child ended for good.
var errNoChild = errors.New("the child ended and is not restarted")

// errStoppingAsk is what asks get when the agent stops before their turn.
var errStoppingAsk = errors.New("the agent is stopping")

// snapshot is the conversation's part of the status file.
func (c *conversation) snapshot() *status.Turn {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := "busy"
	if c.cur == nil && c.tracker != nil && c.tracker.Ready() {
		st = "ready"
	}
	return &status.Turn{State: st, Queued: len(c.queue), Answered: c.answered, TimedOut: c.timedOut}
}

// exitFrame is the last frame of a turn whose child ended.
func exitFrame(id string, st child.ExitStatus, d int64) []byte {
	return protocol.AppendExit(nil, id, protocol.Exit{Code: st.Code(), Signal: child.SignalName(st.Signal()), DurationMS: d})
}

// wakeLoop has the loop look again, without waiting.
func (c *conversation) wakeLoop() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}
