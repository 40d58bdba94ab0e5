package bridge

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/fifo"
)

// feeder moves bytes from the input FIFO to the stdin of whichever child is
// attached. Between children it holds what it read; when a child is
// detached, the bytes left unread in its stdin pipe are taken back and go,
// in order, to the next child.
type feeder struct {
	src io.Reader
	buf []byte

	mu      sync.Mutex
	cond    sync.Cond
	pending []byte   // read from src, not yet written to a child
	stdin   *os.File // the attached child's stdin (agent's end), or nil
	back    *os.File // the same pipe's read end, kept to recover leftovers
	writing bool     // a Write to stdin is under way
	closed  bool
}

func newFeeder(src io.Reader) *feeder {
	f := &feeder{src: src, buf: make([]byte, 64<<10)}
	f.cond.L = &f.mu
	return f
}

// run feeds until src fails (it is closed) or close is called.
func (f *feeder) run() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for !f.closed {
		if len(f.pending) == 0 {
			f.mu.Unlock()
			n, err := f.src.Read(f.buf)
			f.mu.Lock()
			if err != nil {
				return
			}
			f.pending = f.buf[:n]
		}
		for f.stdin == nil && !f.closed {
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
		f.pending = f.pending[n:]
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

// close stops run once its current Read returns; the caller closes src.
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
