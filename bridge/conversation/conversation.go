//go:build linux

package conversation

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// Conversation follows one stream's child, whichever child runs, and
// serves its asks. It wires its parts, each of one concern:
//
//   - askReader (askreader.go) reads DIR/ask and hands each ask accepted
//     to the queue;
//   - askQueue (queue.go) holds the asks waiting and begins the first
//     one's turn once the child is ready;
//   - turns (turns.go) is the turn in progress and its asker (asker.go),
//     which writes its frames to its reply FIFO, and the one just ended;
//   - running (running.go, notready.go) is the running child as its
//     tracker follows it, and whether it is ready;
//   - prober (probe.go), the loop's, asks the child's Reader whether it
//     waits for input;
//   - keptReply (kept.go) keeps the last asker's reply FIFO for its next
//     ask; inputs (input.go) writes to the child; the transcript
//     (transcript.go) copies the child's output to the output FIFO.
//
// One goroutine (loop, loop.go) owns time: it ticks the tracker, probes
// a child at its prompt, ends turns past their limit, expires waiting
// asks and starts the next turn. The copy of the child's output, the ask
// reader and the stream engine's events call in under mu, the lock of
// the queue, the turns and the running child, which decide together
// whether a turn begins; so do the askers' writers. keptReply, inputs and
// the transcript have their own lock, taken under mu, never around it.
type Conversation struct {
	cfg    *Config
	note   *notices   // wake the loop, poke the status file, tell the idle clock
	kept   *keptReply // the last asker's reply FIFO, kept for its next ask
	asks   askReader  // DIR/ask's reader, follower and sweep
	script *transcript
	input  inputs // the turns' input and the interrupts, in order

	quit      chan struct{} // closed by Stop: the loop returns
	stopOnce  sync.Once
	stopAfter func() bool     // ends the wait for the agent's stop
	ctx       context.Context // Start's: its cause says why asks are refused once it ends
	wg        sync.WaitGroup  // every goroutine started here

	mu      sync.Mutex
	changes atomic.Uint64 // moved under mu by every change (lock): see Changes
	child   running       // the running child: its tracker, and whether it is ready
	turn    turns         // the turn in progress and its asker
	queue   askQueue      // the asks waiting for their turn
	count   tally         // how the turns ended
}

// New returns the conversation of a stream whose child is child, with
// sink, the output FIFO, as its transcript. Start serves it.
func New(cfg *Config, child Child, sink *fifo.Sink) *Conversation {
	c := &Conversation{cfg: cfg, script: newTranscript(sink), kept: &keptReply{replies: cfg.Replies},
		note: &notices{wake: make(chan struct{}, 1), onPoke: cfg.Poke, onActivity: cfg.Activity},
		quit: make(chan struct{}), stopAfter: func() bool { return false },
		child: running{prompt: cfg.Prompt}}
	c.input = inputs{to: child, terminal: cfg.Terminal, wg: &c.wg, log: cfg.Log}
	c.turn = turns{mu: &c.mu, log: cfg.Log, rule: bound.NewRule(cfg.StopTimeout), wg: &c.wg, note: c.note,
		child: &c.child, input: &c.input, kept: c.kept, count: &c.count}
	c.turn.room.L = &c.mu
	c.queue = askQueue{log: cfg.Log, replies: cfg.Replies, note: c.note, kept: c.kept, turn: &c.turn, child: &c.child,
		count: &c.count, waiting: bound.NewQueue[*waiting](MaxQueued)}
	c.asks = askReader{cfg: cfg, kept: c.kept, enqueue: c.enqueue, wg: &c.wg}
	return c
}

// Start starts the turn loop, the transcript's writer and the reader of
// DIR/ask with its follower and the reply sweep. Once ctx is done (the
// agent stops), writes to askers are given up at the stop's deadline and
// the child's output is no longer held up for them. Stop ends what Start
// started, Wait waits for it.
func (c *Conversation) Start(ctx context.Context) {
	c.ctx = ctx
	c.wg.Add(3)
	go func() { defer c.wg.Done(); c.loop() }()
	go func() { defer c.wg.Done(); c.script.run() }()
	c.stopAfter = context.AfterFunc(ctx, func() { defer c.wg.Done(); c.stopBegins() })
	c.asks.start()
}

// stopBegins is the start of the agent's stop.
func (c *Conversation) stopBegins() {
	c.turn.rule.Stop()
	c.lock()
	c.turn.stop()
	c.kept.refuse()
	c.mu.Unlock()
}

// Stop refuses the asks waiting and every later one, ends the turn in
// progress with an error frame (the agent is stopping), stops reading
// DIR/ask and ends the loop. Call it when the child ended for good or the
// agent stops, after the child's output was copied; then close the
// transcript's sink, and Wait.
func (c *Conversation) Stop() {
	c.stopOnce.Do(func() {
		c.lock()
		c.turn.fail(c.stopReason())
		c.queue.endAll(c.stopReason())
		c.kept.drop()
		c.mu.Unlock()
		close(c.quit)
		if c.stopAfter() {
			c.wg.Done() // the agent's stop will not come now
		}
		c.asks.stop()
		c.script.close()
	})
}

// enqueue is where the ask reader hands an accepted ask (askQueue.enqueue).
func (c *Conversation) enqueue(req protocol.ParsedAsk, reply *fifo.Reply) (kept bool, err error) {
	c.lock()
	defer c.mu.Unlock()
	return c.queue.enqueue(req, reply, time.Now())
}

// Wait waits for every goroutine the conversation started: the last
// asker's frames are written or given up (package bound), and every
// descriptor it opened is closed.
func (c *Conversation) Wait() { c.wg.Wait() }

func since(t, now time.Time) int64 { return now.Sub(t).Milliseconds() }

// errNoChild is what waiting asks get when the child ended for good.
var errNoChild = errors.New("the child ended and is not restarted")

// errStopping is what asks get when the agent stops before their turn.
var errStopping = errors.New("the agent is stopping")

// stopReason is what asks get when the conversation stops before their
// turn: the cause Start's context was cancelled with (a session's
// close: "session sh1 is closing"), else errStopping.
func (c *Conversation) stopReason() error {
	if c.ctx != nil {
		if cause := context.Cause(c.ctx); cause != nil && !errors.Is(cause, context.Canceled) {
			return cause
		}
	}
	return errStopping
}

// errTooMany is what an ask gets when MaxQueued wait already.
var errTooMany = fmt.Errorf("too many asks waiting (at most %d wait at once)", MaxQueued)
