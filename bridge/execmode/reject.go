//go:build linux

package execmode

import (
	"log/slog"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/fifo"
)

// rejectionQueueBytes bounds the error frames waiting for the output FIFO,
// in bytes: bad input costs the agent this much memory at most.
const rejectionQueueBytes = 256 << 10

// reject answers a request that will not run with exactly one error frame:
// on its reply FIFO when it named one that could be opened, else on the
// output FIFO. It never waits for a reply FIFO's reader; it waits for the
// output FIFO's reader only while one takes frames (backpressure), and
// drops the frame when nobody reads.
func (e *Engine) reject(id string, reply *fifo.Reply, err error) {
	e.rejected.Add(1)
	e.cfg.Log.Warn("request rejected", "id", id, "err", err)
	defer e.poke()
	e.answer(id, reply, err)
}

// rejectionQueue holds error frames for the output FIFO, at most limit
// bytes of them, for its writer (run) to write in order.
type rejectionQueue struct {
	out   *outFIFO
	limit int
	log   *slog.Logger

	mu       sync.Mutex
	frames   [][]byte
	bytes    int
	closed   bool
	dropped  int  // frames dropped since the last one queued
	given    bool // past the give-up deadline: a full queue drops at once
	ready    chan struct{}
	room     chan struct{}
	givenUp  chan struct{}
	giveOnce sync.Once
}

func newRejectionQueue(out *outFIFO, limit int, log *slog.Logger) *rejectionQueue {
	return &rejectionQueue{out: out, limit: limit, log: log,
		ready: make(chan struct{}, 1), room: make(chan struct{}, 1), givenUp: make(chan struct{})}
}

// put queues frame. While the queue is full it waits for room as long as
// the output FIFO's reader takes frames; when nobody reads (nothing taken
// for bound.ReaderPatience), or after giveUp, it drops the frame and logs
// that.
func (q *rejectionQueue) put(frame []byte) {
	for {
		q.mu.Lock()
		if q.bytes == 0 || q.bytes+len(frame) <= q.limit {
			if q.dropped > 0 {
				q.log.Warn("error frames were dropped: nobody read the output fifo", "dropped", q.dropped)
				q.dropped = 0
			}
			q.frames = append(q.frames, frame)
			q.bytes += len(frame)
			q.mu.Unlock()
			poke(q.ready)
			return
		}
		untaken := q.out.untaken()
		if q.given || untaken >= bound.ReaderPatience {
			if q.dropped == 0 {
				q.log.Warn("error frames dropped from now on: nobody reads the output fifo")
			}
			q.dropped++
			q.mu.Unlock()
			return
		}
		q.mu.Unlock()
		t := time.NewTimer(bound.ReaderPatience - untaken)
		select {
		case <-q.room:
		case <-q.givenUp:
		case <-t.C:
		}
		t.Stop()
	}
}

// run writes queued frames until close was called and the queue is empty.
// Once the output FIFO is closed, the rest are dropped.
func (q *rejectionQueue) run() {
	for {
		q.mu.Lock()
		for len(q.frames) == 0 && !q.closed {
			q.mu.Unlock()
			<-q.ready
			q.mu.Lock()
		}
		if len(q.frames) == 0 {
			if q.dropped > 0 {
				q.log.Warn("error frames were dropped: nobody read the output fifo", "dropped", q.dropped)
			}
			q.mu.Unlock()
			return
		}
		frame := q.frames[0]
		q.frames[0] = nil
		q.frames = q.frames[1:]
		q.mu.Unlock()
		err := q.out.write(frame, 0, nil)
		q.mu.Lock()
		q.bytes -= len(frame)
		if err != nil {
			q.dropped++ // the output fifo was given up
		}
		q.mu.Unlock()
		poke(q.room)
	}
}

// close makes run return once the frames queued are written or dropped.
func (q *rejectionQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	poke(q.ready)
}

// giveUp makes a full queue drop frames at once rather than wait.
func (q *rejectionQueue) giveUp() {
	q.mu.Lock()
	q.given = true
	q.mu.Unlock()
	q.giveOnce.Do(func() { close(q.givenUp) })
}

// poke wakes whoever waits on c, a channel of capacity one, without waiting.
func poke(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}
