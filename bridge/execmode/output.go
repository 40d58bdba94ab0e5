package execmode

import (
	"errors"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/fifo"
)

// errNobodyReads is a finished request's frame given up because the output
// FIFO has taken nothing for the patience.
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
	progress time.Time // when a write last finished, or the first began
}

func newOutFIFO(sink *fifo.Sink) *outFIFO {
	return &outFIFO{sink: sink, turn: make(chan struct{}, 1)}
}

// write writes frame whole, after the frames before it, waiting while the
// FIFO is full. Once ended is closed (nil: never), it stops waiting for
// its turn when the FIFO has taken nothing for patience, and returns
// errNobodyReads; a frame already in the Sink waits on, until a stop's
// deadline closes the Sink (the error is then fifo.ErrClosed).
func (o *outFIFO) write(frame []byte, ended <-chan struct{}, patience time.Duration) error {
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
	var expire <-chan time.Time
	for {
		select {
		case o.turn <- struct{}{}:
			_, err := o.sink.Write(frame)
			o.mu.Lock()
			o.progress = time.Now()
			o.mu.Unlock()
			<-o.turn
			return err
		case <-ended:
			ended = nil // from now on, patience applies
		case <-expire:
		}
		left := patience - o.untaken()
		if left <= 0 {
			return errNobodyReads
		}
		expire = time.After(left)
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
