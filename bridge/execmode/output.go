//go:build linux

package execmode

import (
	"errors"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// errNobodyReads is a request's frame given up because the output FIFO
// has taken nothing for the patience.
var errNobodyReads = errors.New("nobody reads the output fifo")

// outFIFO is the output FIFO as exec mode writes it: each frame whole, one
// at a time, in the order the writers come, and a record of whether it
// takes what is written, which is how the agent tells whether anybody
// reads it.
type outFIFO struct {
	sink *fifo.Sink
	turn chan struct{} // holds a token while a frame is in the Sink

	mu       sync.Mutex
	waiting  int       // writes under way, their turn come or not
	progress time.Time // when the FIFO last took a piece, or the first write began
}

func newOutFIFO(sink *fifo.Sink) *outFIFO {
	return &outFIFO{sink: sink, turn: make(chan struct{}, 1)}
}

// write writes frame whole, after the frames before it, waiting while the
// FIFO is full. With patience (0: none), it stops waiting for its turn
// once the FIFO has taken nothing for patience, and returns
// errNobodyReads. A frame whose turn came is written whole, whatever
// happens (a frame cut short would garble every later one), until a
// stop's deadline closes the Sink (the error is then fifo.ErrClosed); if
// the FIFO takes nothing of it for patience, stalled is called, once, so
// that its request is given up meanwhile.
func (o *outFIFO) write(frame []byte, patience time.Duration, stalled func()) error {
	o.mu.Lock()
	if o.waiting == 0 {
		o.progress = time.Now()
	}
	o.waiting++
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		o.waiting--
		o.mu.Unlock()
	}()
	for {
		if o.takeTurn(patience) {
			defer func() { <-o.turn }()
			return o.writeWhole(frame, patience, stalled)
		}
		if o.untaken() >= patience {
			return errNobodyReads
		}
	}
}

// takeTurn waits for the turn, at most until the FIFO has taken nothing
// for patience (0: as long as it takes), and reports whether it got it.
func (o *outFIFO) takeTurn(patience time.Duration) bool {
	select {
	case o.turn <- struct{}{}:
		return true
	default:
	}
	if patience <= 0 {
		o.turn <- struct{}{}
		return true
	}
	left := patience - o.untaken()
	if left <= 0 {
		return false
	}
	t := time.NewTimer(left)
	defer t.Stop()
	select {
	case o.turn <- struct{}{}:
		return true
	case <-t.C:
		return false
	}
}

// writeWhole writes frame to the Sink in pieces of PIPE_BUF bytes, each of
// which counts as the FIFO taking something, so that a reader that takes
// a little at a time is never taken for one that takes nothing.
func (o *outFIFO) writeWhole(frame []byte, patience time.Duration, stalled func()) error {
	if patience > 0 && stalled != nil {
		stop := o.watchStall(patience, stalled)
		defer stop()
	}
	for len(frame) > 0 {
		n := min(len(frame), protocol.PipeBuf)
		_, err := o.sink.Write(frame[:n])
		o.mu.Lock()
		o.progress = time.Now()
		o.mu.Unlock()
		if err != nil {
			return err
		}
		frame = frame[n:]
	}
	return nil
}

// watchStall calls stalled once the FIFO has taken nothing for patience,
// unless the returned stop is called first; once stop returned, stalled
// is not called.
func (o *outFIFO) watchStall(patience time.Duration, stalled func()) (stop func()) {
	var mu sync.Mutex
	over := false
	var t *time.Timer
	check := func() {
		mu.Lock()
		defer mu.Unlock()
		if over {
			return
		}
		if left := patience - o.untaken(); left > 0 {
			t.Reset(left)
			return
		}
		over = true
		stalled()
	}
	mu.Lock()
	t = time.AfterFunc(patience, check)
	mu.Unlock()
	return func() {
		mu.Lock()
		over = true
		t.Stop()
		mu.Unlock()
	}
}

// untaken returns how long the FIFO has taken nothing while a write waits
// for it; zero when none waits.
func (o *outFIFO) untaken() time.Duration {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.waiting == 0 {
		return 0
	}
	return time.Since(o.progress)
}
