package bridge

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/fifo"
)

// feedLimit is how many bytes the feeder reads ahead of the child. Past it,
// the feeder stops reading, and writers of the input FIFO wait
// (backpressure).
const feedLimit = 64 << 10

// feeder moves bytes from the input FIFO to the stdin of whichever child is
// attached. Between children it holds what it read; when a child is
// detached, the bytes left unread in its stdin pipe are taken back and go,
// in order, to the next child. One goroutine reads, one writes, so that
// bytes taken back are delivered even when no new input comes.
type feeder struct {
	src io.Reader

	mu      sync.Mutex
	cond    sync.Cond
	store   []byte   // pending's buffer, reused whenever pending empties
	pending []byte   // read from src, not yet written to a child
	stdin   *os.File // the attached child's stdin (agent's end), or nil
	back    *os.File // the same pipe's read end, kept to recover leftovers
	writing bool     // a Write to stdin is under way
	closed  bool
}

func newFeeder(src io.Reader) *feeder {
	f := &feeder{src: src, store: make([]byte, 0, 2*feedLimit)}
	f.pending = f.store
	f.cond.L = &f.mu
	return f
}

// run feeds until close is called and src fails (the caller closes it). It
// returns after both of its goroutines.
func (f *feeder) run() {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); f.writeLoop() }()
	f.readLoop()
	f.mu.Lock()
	f.closed = true
	f.cond.Broadcast()
	f.mu.Unlock()
	wg.Wait()
}

func (f *feeder) readLoop() {
	buf := make([]byte, feedLimit)
	for {
		f.mu.Lock()
		for len(f.pending) >= feedLimit && !f.closed {
			f.cond.Wait()
		}
		closed := f.closed
		f.mu.Unlock()
		if closed {
			return
		}
		n, err := f.src.Read(buf)
		f.mu.Lock()
		f.pending = append(f.pending, buf[:n]...)
		f.cond.Broadcast()
		f.mu.Unlock()
		if err != nil {
			return
		}
	}
}

func (f *feeder) writeLoop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for {
		for (len(f.pending) == 0 || f.stdin == nil) && !f.closed {
			f.cond.Wait()
		}
		if f.closed {
			return
		}
		w, data := f.stdin, f.pending
		f.writing = true
		f.mu.Unlock()
		n, _ := w.Write(data) // fails only when detach wakes it
		f.mu.Lock()
		f.writing = false
		// The reader only appends, and detach only prepends while no
		// Write is under way, so the first n bytes are still data's.
		f.pending = f.pending[n:]
		if len(f.pending) == 0 {
			f.pending = f.store[:0]
		}
		f.cond.Broadcast()
	}
}

// attach makes stdin the destination; back is the read end of its pipe.
func (f *feeder) attach(stdin, back *os.File) {
	f.mu.Lock()
	f.stdin, f.back = stdin, back
	f.cond.Broadcast()
	f.mu.Unlock()
}

// detach takes the child's stdin away, recovers the bytes the child did not
// read, and closes both ends of its pipe. Call it after the child's tree is
// gone.
func (f *feeder) detach() {
	f.mu.Lock()
	w, back := f.stdin, f.back
	f.stdin, f.back = nil, nil
	if w == nil {
		f.mu.Unlock()
		return
	}
	w.SetWriteDeadline(time.Unix(1, 0))
	for f.writing {
		f.cond.Wait()
	}
	if left := fifo.Drain(back); len(left) > 0 {
		f.pending = append(left, f.pending...)
	}
	f.mu.Unlock()
	w.Close()
	back.Close()
}

// close ends run once src's current Read returns; the caller closes src.
func (f *feeder) close() {
	f.mu.Lock()
	f.closed = true
	f.cond.Broadcast()
	f.mu.Unlock()
}

// held reports how many bytes wait for the next child.
func (f *feeder) held() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pending)
}
