package stream

import (
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/fifo"
)

// askReply is where one ask's frames go: its reply FIFO, written by a
// writer goroutine of its own, so that the turn loop never waits for an
// ask's reader. Frames are written in order; once a write fails (the
// reader left, the FIFO was replaced, a stop gave it up) the rest are
// dropped. A watch notices at once when the reader leaves, even while
// nothing is written, and calls gone (the ask vanished).
type askReply struct {
	id    string
	reply *fifo.Reply
	log   *slog.Logger

	mu     sync.Mutex
	cond   sync.Cond
	frames [][]byte
	done   bool // finish was called: write what is queued, then close
	left   atomic.Bool

	closed chan struct{} // closed once the writer and the watch returned and the FIFO is closed
}

// newAskReply starts the writer and the watch of reply; gone is called,
// once, from the watch when the reader leaves. wg counts them until the
// reply FIFO is closed.
func newAskReply(id string, reply *fifo.Reply, log *slog.Logger, gone func(), wg *sync.WaitGroup) *askReply {
	r := &askReply{id: id, reply: reply, log: log, closed: make(chan struct{})}
	r.cond.L = &r.mu
	watched := make(chan struct{})
	wg.Add(1)
	go func() {
		defer close(watched)
		if answer.ReaderGone(reply.File()) {
			r.left.Store(true)
			gone()
		}
	}()
	go func() {
		defer wg.Done()
		r.run()
		reply.File().SetReadDeadline(time.Unix(1, 0)) // ends the watch
		<-watched
		reply.Close()
		close(r.closed)
	}()
	return r
}

// send queues frame; it never waits.
func (r *askReply) send(frame []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done || r.left.Load() {
		return
	}
	r.frames = append(r.frames, frame)
	r.cond.Broadcast()
}

// finish says the ask's last frame was sent: the writer writes what is
// queued and closes the reply FIFO.
func (r *askReply) finish() {
	r.mu.Lock()
	r.done = true
	r.cond.Broadcast()
	r.mu.Unlock()
}

// giveUp wakes a write blocked on a reader that does not read, and any
// later one, with an error: the remaining frames are dropped.
func (r *askReply) giveUp() { r.reply.SetWriteDeadline(time.Unix(1, 0)) }

// vanished reports whether the ask's reader went away.
func (r *askReply) vanished() bool { return r.left.Load() }

func (r *askReply) run() {
	for {
		r.mu.Lock()
		for len(r.frames) == 0 && !r.done {
			r.cond.Wait()
		}
		frames := r.frames
		r.frames = nil
		r.mu.Unlock()
		if len(frames) == 0 {
			return
		}
		for _, f := range frames {
			if r.left.Load() {
				break
			}
			if _, err := r.reply.Write(f); err != nil {
				r.log.Info("ask's frames dropped: its reply fifo takes nothing", "id", r.id, "err", err)
				r.left.Store(true)
			}
		}
	}
}
