package execmode

import (
	"sync"
	"time"
)

// When exec mode gives up a write that blocks is decided here, and nowhere
// else, in the spirit of os/exec's WaitDelay. A write blocks when the FIFO
// it goes to is full: its reader does not read, or there is none but the
// agent's own end of the output FIFO.
//
// While serving:
//
//   - A request's frames wait for a reader as long as its child runs
//     (backpressure, through its full pipes, on the child alone).
//   - Once its child has ended, a write to its reply FIFO that stays
//     blocked for patience (-stop-timeout, at least readerPatience) is
//     given up, and so is the rest of its frames; its frames for the
//     output FIFO are dropped once that FIFO has taken nothing for
//     patience (see outFIFO.write).
//   - An error frame that finds the rejection queue full is dropped once
//     the output FIFO has taken nothing for readerPatience (see
//     rejectionQueue.put): bad input nobody reads the answers to does not
//     hold the request loop.
//
// When a stop begins, one deadline: -stop-timeout, when trees still there
// get SIGKILL, plus stopGrace for their exit frames to reach a reader.
// From the deadline on, every write still under way and every later one
// is given up (reply FIFOs by their write deadline, the output FIFO by
// closing it, the rejection queue by dropping); the exit frame of a child
// SIGKILL has not ended by halfway to it is written then. Nothing of exec
// mode waits past it, so a stop ends within -stop-timeout + stopGrace and
// the time to tidy up (unless a tree outlives SIGKILL: package child's
// Stop waits for it longer).

// stopGrace is how long after SIGKILL a stopping agent still waits for
// readers to take the last frames.
const stopGrace = 250 * time.Millisecond

// readerPatience is the least time a blocked write waits for a reader,
// once nothing but a reader's absence holds it, before it is given up.
const readerPatience = time.Second

// giveUp holds exec mode's deadlines and applies the stop's one deadline
// to every reply FIFO that is written.
type giveUp struct {
	stopTimeout time.Duration
	patience    time.Duration

	mu      sync.Mutex
	killAt  time.Time // zero until a stop begins
	replies map[*frames]struct{}
}

func newGiveUp(stopTimeout time.Duration) *giveUp {
	return &giveUp{stopTimeout: stopTimeout, patience: max(stopTimeout, readerPatience),
		replies: make(map[*frames]struct{})}
}

// stop begins the stop, the first time it is called, and returns when the
// stop escalates to SIGKILL. From now on every reply write is given up at
// the deadline, those under way too.
func (g *giveUp) stop() time.Time {
	g.mu.Lock()
	if !g.killAt.IsZero() {
		defer g.mu.Unlock()
		return g.killAt
	}
	g.killAt = time.Now().Add(g.stopTimeout)
	replies := make([]*frames, 0, len(g.replies))
	for w := range g.replies {
		replies = append(replies, w)
	}
	killAt := g.killAt
	g.mu.Unlock()
	// Outside g.mu: a write takes its own lock first, then g.mu.
	for _, w := range replies {
		w.armDeadline()
	}
	return killAt
}

// deadline is when a stop gives every write up: -stop-timeout plus
// stopGrace after the stop began. It begins the stop if need be.
func (g *giveUp) deadline() time.Time { return g.stop().Add(stopGrace) }

// stopping reports whether a stop has begun.
func (g *giveUp) stopping() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return !g.killAt.IsZero()
}

// replyDeadline is the write deadline of a reply write that begins now,
// for a request that has ended or not; zero: none.
func (g *giveUp) replyDeadline(ended bool) time.Time {
	var d time.Time
	if ended {
		d = time.Now().Add(g.patience)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.killAt.IsZero() {
		if stop := g.killAt.Add(stopGrace); d.IsZero() || stop.Before(d) {
			d = stop
		}
	}
	return d
}

// watch registers a reply FIFO's frames, so that a stop reaches writes
// under way on it; forget undoes that.
func (g *giveUp) watch(w *frames) {
	g.mu.Lock()
	g.replies[w] = struct{}{}
	g.mu.Unlock()
}

func (g *giveUp) forget(w *frames) {
	g.mu.Lock()
	delete(g.replies, w)
	g.mu.Unlock()
}

// expire waits for the stop's deadline and then calls giveUpOutput, which
// gives up the output FIFO and the rejection queue; it returns at once
// when finished is closed first.
func (g *giveUp) expire(finished <-chan struct{}, giveUpOutput func()) {
	t := time.NewTimer(time.Until(g.deadline()))
	defer t.Stop()
	select {
	case <-finished:
	case <-t.C:
		giveUpOutput()
	}
}
