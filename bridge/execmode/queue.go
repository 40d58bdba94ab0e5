//go:build linux

package execmode

import (
	"context"
	"errors"
	"sync"

	"github.com/fifobridge/fifobridge/bridge/internal/bound"
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

// requestQueue holds the accepted requests: those waiting for a slot, in
// arrival order, at most limit of them (a bound.Queue), and the running
// ones by id, for cancels. It has a lock of its own: nothing else is done
// under it.
type requestQueue struct {
	queued chan struct{} // poked when a request is queued
	room   chan struct{} // poked when the queue has room

	mu      sync.Mutex
	waiting *bound.Queue[*pending]
	live    map[string][]*cancel // running requests by id, until their child is reaped
}

func newRequestQueue(limit int) *requestQueue {
	return &requestQueue{waiting: bound.NewQueue[*pending](limit), queued: make(chan struct{}, 1),
		room: make(chan struct{}, 1), live: make(map[string][]*cancel)}
}

// put queues p, waiting while the queue is full. It fails only when ctx is
// done (the agent stops); p is then not queued.
func (q *requestQueue) put(ctx context.Context, p *pending) error {
	for {
		q.mu.Lock()
		if ctx.Err() != nil {
			q.mu.Unlock()
			return errStopping
		}
		if q.waiting.Put(p) {
			q.mu.Unlock()
			poke(q.queued)
			return nil
		}
		q.mu.Unlock()
		select {
		case <-q.room:
		case <-ctx.Done():
		}
	}
}

// dispatch starts queued requests in arrival order, each once a slot is
// free, until the agent stops; then every request still queued gets an
// error frame.
func (e *Engine) dispatch(ctx context.Context, requests *sync.WaitGroup) {
	for {
		p := e.queue.head(ctx)
		if p == nil || e.takeSlot(ctx) != nil {
			break
		}
		if !e.queue.begin(p) {
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
	for _, p := range e.queue.drain() {
		e.reject(p.req.ID, p.reply, errStopping)
	}
}

// head waits for the first queued request, or returns nil once stopping.
func (q *requestQueue) head(ctx context.Context) *pending {
	for {
		q.mu.Lock()
		if ctx.Err() != nil {
			q.mu.Unlock()
			return nil
		}
		if p, ok := q.waiting.Head(); ok {
			q.mu.Unlock()
			return p
		}
		q.mu.Unlock()
		select {
		case <-q.queued:
		case <-ctx.Done():
		}
	}
}

// begin moves p from the head of the queue to the running requests, unless
// a cancel took it from the queue meanwhile.
func (q *requestQueue) begin(p *pending) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if head, ok := q.waiting.Head(); !ok || head != p {
		return false
	}
	q.waiting.Pop()
	q.live[p.req.ID] = append(q.live[p.req.ID], p.cancel)
	poke(q.room)
	return true
}

// untrack removes a request from the running ones: a cancel from now on finds
// it finished.
func (q *requestQueue) untrack(id string, c *cancel) {
	q.mu.Lock()
	defer q.mu.Unlock()
	cs := q.live[id]
	for i, x := range cs {
		if x == c {
			cs = append(cs[:i:i], cs[i+1:]...)
			break
		}
	}
	if len(cs) == 0 {
		delete(q.live, id)
	} else {
		q.live[id] = cs
	}
}

// take removes every queued request with id from the queue, and returns
// them and the running ones with id.
func (q *requestQueue) take(id string) (queued []*pending, running []*cancel) {
	q.mu.Lock()
	queued = q.waiting.Remove(func(p *pending) bool { return p.req.ID == id })
	running = append([]*cancel(nil), q.live[id]...)
	q.mu.Unlock()
	if len(queued) > 0 {
		poke(q.room)
	}
	return queued, running
}

// drain empties the queue once the agent stops (ctx done: put queues
// nothing from then on) and returns what was in it.
func (q *requestQueue) drain() []*pending {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiting.Drain()
}

// len is how many requests wait for a slot.
func (q *requestQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.waiting.Len()
}
