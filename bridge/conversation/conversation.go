//go:build linux

package conversation

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/turn"
)

// Conversation follows one stream's child, whichever child runs, and
// serves its asks.
//
// One goroutine (loop) owns time: it ticks the tracker, probes a child at
// its prompt (probe.go), ends turns past their limit, expires waiting asks
// and starts the next turn. The copy of
// the child's output, the ask reader and the stream engine's events call
// in under mu; so do the asker's writer and watch.
type Conversation struct {
	cfg    *Config
	child  Child
	rule   *bound.Rule // how long writes to an asker wait
	script *transcript
	input  inputs // the turns' input and typed interrupts, in order

	nextID uint64 // ids given to asks that came without one; the ask reader's own

	wake       chan struct{} // poked when the loop has something to look at
	quit       chan struct{} // closed by Stop: the loop returns
	stopOnce   sync.Once
	asks       *fifo.Source // DIR/ask, or nil
	stopFollow context.CancelFunc
	stopAfter  func() bool    // ends the wait for the agent's stop
	wg         sync.WaitGroup // every goroutine started here

	mu       sync.Mutex
	room     sync.Cond     // on mu: an asker's frames were taken, the turn changed, a stop began
	tracker  *turn.Tracker // the running child's; nil between children
	clock    outputClock   // the tracker's clock
	reader   Reader        // the running child's, or nil: -settle alone decides
	children uint64        // children started: the running one's number
	outputs  uint64        // calls of the tracker's Output: what it saw
	queue    *bound.Queue[*waiting]
	cur      *asker      // the turn in progress, or nil
	last     *asker      // the turn just ended, while its frames are written, or nil
	kept     *fifo.Reply // the last asker's reply FIFO, kept for its next ask (kept.go), or nil
	stopping bool        // a stop began: the child's output is no longer held up
	ended    error       // set when no child will answer again: asks get this
	unready  unready     // when the child last stopped being ready outside a turn
	scratch  []byte      // one call's answer

	answered, timedOut, incomplete uint64
}

// New returns the conversation of a stream whose child is child, with
// sink, the output FIFO, as its transcript. Start serves it.
func New(cfg *Config, child Child, sink *fifo.Sink) *Conversation {
	c := &Conversation{cfg: cfg, child: child, rule: bound.NewRule(cfg.StopTimeout), script: newTranscript(sink),
		wake: make(chan struct{}, 1), quit: make(chan struct{}), stopFollow: func() {}, stopAfter: func() bool { return false },
		queue: bound.NewQueue[*waiting](MaxQueued)}
	c.room.L = &c.mu
	c.input.wg, c.input.log = &c.wg, cfg.Log
	return c
}

// Start starts the turn loop, the transcript's writer and the reader of
// DIR/ask with its follower and the reply sweep. Once ctx is done (the
// agent stops), writes to askers are given up at the stop's deadline and
// the child's output is no longer held up for them. Stop ends what Start
// started, Wait waits for it.
func (c *Conversation) Start(ctx context.Context) {
	c.wg.Add(3)
	go func() { defer c.wg.Done(); c.loop() }()
	go func() { defer c.wg.Done(); c.script.run() }()
	c.stopAfter = context.AfterFunc(ctx, func() { defer c.wg.Done(); c.stopBegins() })
	c.serveAsks()
}

// stopBegins is the start of the agent's stop.
func (c *Conversation) stopBegins() {
	c.rule.Stop()
	c.mu.Lock()
	c.stopping = true
	c.room.Broadcast()
	c.mu.Unlock()
}

// Stop refuses the asks waiting and every later one, ends the turn in
// progress with an error frame (the agent is stopping), stops reading
// DIR/ask and ends the loop. Call it when the child ended for good or the
// agent stops, after the child's output was copied; then close the
// transcript's sink, and Wait.
func (c *Conversation) Stop() {
	c.stopOnce.Do(func() {
		c.mu.Lock()
		if a := c.cur; a != nil {
			c.finish(errorFrame(a.req.ID, errStopping))
		}
		c.endAll(errStopping)
		c.dropKept()
		c.room.Broadcast()
		c.mu.Unlock()
		close(c.quit)
		if c.stopAfter() {
			c.wg.Done() // the agent's stop will not come now
		}
		c.stopFollow()
		if c.asks != nil {
			c.asks.Close() // ends serveAsks
		}
		c.script.close()
	})
}

// Wait waits for every goroutine the conversation started: the last
// asker's frames are written or given up (package bound), and every
// descriptor it opened is closed.
func (c *Conversation) Wait() { c.wg.Wait() }

// loop runs the turns until Stop.
func (c *Conversation) loop() {
	t := time.NewTimer(time.Hour)
	defer t.Stop()
	var sched probeSchedule
	for {
		now := time.Now()
		next, ok, look := c.step(now)
		if look.r != nil {
			again, atOnce := c.probe(&sched, look, now)
			if atOnce {
				continue
			}
			if !again.IsZero() && (!ok || again.Before(next)) {
				next, ok = again, true
			}
		}
		t.Stop()
		if ok {
			t.Reset(max(time.Until(next), 0))
		}
		select {
		case <-c.quit:
			return
		case <-c.wake:
		case <-t.C:
		}
	}
}

// step does what is due at now, says when to look again, and returns the
// prompt the child shows, not yet taken, for the loop to probe.
func (c *Conversation) step(now time.Time) (time.Time, bool, promptLook) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tracker != nil && !c.clock.held() {
		c.handle(c.tracker.Tick(c.clock.at(now)))
	}
	c.checkTurn(now)
	c.expireWaiting(now)
	c.startNext(now)
	next, ok := c.nextLook()
	look, _ := c.lookAtPrompt()
	return next, ok, look
}

// wakeLoop has the loop look again, without waiting.
func (c *Conversation) wakeLoop() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// poke says the status changed.
func (c *Conversation) poke() {
	if c.cfg.Poke != nil {
		c.cfg.Poke()
	}
}

// activity tells the idle clock that asks are being served.
func (c *Conversation) activity() {
	if c.cfg.Activity != nil {
		c.cfg.Activity()
	}
}

func since(t, now time.Time) int64 { return now.Sub(t).Milliseconds() }

// errNoChild is what waiting asks get when the child ended for good.
var errNoChild = errors.New("the child ended and is not restarted")

// errStopping is what asks get when the agent stops before their turn.
var errStopping = errors.New("the agent is stopping")

// errTooMany is what an ask gets when MaxQueued wait already.
var errTooMany = fmt.Errorf("too many asks waiting (at most %d wait at once)", MaxQueued)
