package execmode

import (
	"context"
	"errors"
	"sync"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// Requests read from the input FIFO wait for a slot in a queue of at most
// MaxConcurrent requests, so that a cancel line behind them is read and
// acted on while they wait; when the queue is full, further lines wait in
// the input FIFO (backpressure), as before. The dispatcher starts queued
// requests in arrival order as slots free up.

// pending is an accepted request: queued, then running.
type pending struct {
	req    protocol.Parsed
	reply  *fifo.Reply // its reply FIFO, or nil: the output FIFO
	cancel *cancel
}

// errStopping is the error frame of a request that did not start because
// the agent stops.
var errStopping = errors.New("agent is stopping")

// enqueue queues p, waiting while the queue is full. It fails only when
// the agent is stopping; p is then not queued.
func (e *Engine) enqueue(ctx context.Context, p *pending) error {
	for {
		e.mu.Lock()
		if ctx.Err() != nil {
			e.mu.Unlock()
			return errStopping
		}
		if len(e.queue) < cap(e.slots) {
			e.queue = append(e.queue, p)
			e.mu.Unlock()
			poke(e.queued)
			return nil
		}
		e.mu.Unlock()
		select {
		case <-e.room:
		case <-ctx.Done():
		}
	}
}

// dispatch starts queued requests in arrival order, each once a slot is
// free, until the agent stops; then every request still queued gets an
// error frame.
func (e *Engine) dispatch(ctx context.Context, requests *sync.WaitGroup) {
	for {
		p := e.head(ctx)
		if p == nil || e.takeSlot(ctx) != nil {
			break
		}
		if !e.begin(p) {
			<-e.slots // canceled while it waited for the slot
			continue
		}
		r := e.newRequest(p)
		requests.Add(1)
		go func() {
			defer requests.Done()
			r.run(ctx, func() { <-e.slots })
		}()
	}
	e.mu.Lock()
	left := e.queue
	e.queue = nil // ctx is done: nothing is queued from now on
	e.mu.Unlock()
	for _, p := range left {
		e.reject(p.req.ID, p.reply, errStopping)
	}
}

// head waits for the first queued request, or returns nil once stopping.
func (e *Engine) head(ctx context.Context) *pending {
	for {
		e.mu.Lock()
		if ctx.Err() != nil {
			e.mu.Unlock()
			return nil
		}
		if len(e.queue) > 0 {
			p := e.queue[0]
			e.mu.Unlock()
			return p
		}
		e.mu.Unlock()
		select {
		case <-e.queued:
		case <-ctx.Done():
		}
	}
}

// begin moves p from the head of the queue to the running requests, unless
// a cancel took it from the queue meanwhile.
func (e *Engine) begin(p *pending) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.queue) == 0 || e.queue[0] != p {
		return false
	}
	e.queue[0] = nil
	e.queue = e.queue[1:]
	e.live[p.req.ID] = append(e.live[p.req.ID], p.cancel)
	poke(e.room)
	return true
}

// untrack removes a request from the running ones: a cancel from now on finds
// it finished.
func (e *Engine) untrack(id string, c *cancel) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cs := e.live[id]
	for i, x := range cs {
		if x == c {
			cs = append(cs[:i:i], cs[i+1:]...)
			break
		}
	}
	if len(cs) == 0 {
		delete(e.live, id)
	} else {
		e.live[id] = cs
	}
}
