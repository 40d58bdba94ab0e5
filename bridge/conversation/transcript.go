//go:build linux

package conversation

import (
	"sync"
	"sync/atomic"

	"github.com/fifobridge/fifobridge/fifo"
)

// transcriptBuffer is the most of the child's output that waits in the
// agent for the output FIFO's reader (besides what the FIFO itself holds);
// what comes while it is full is dropped and counted.
const transcriptBuffer = 256 << 10

// transcript is the output FIFO of a conversation (-prompt): every byte the
// child writes is offered to it, and none is ever waited for. One writer
// goroutine (run, owned by the stream) writes what is offered to the
// output FIFO, with its backpressure; what arrives while transcriptBuffer
// bytes already wait is dropped and counted, so that a child whose
// transcript nobody reads still answers its asks.
type transcript struct {
	sink *fifo.Sink

	mu      sync.Mutex
	cond    sync.Cond
	buf     []byte
	closed  bool
	written atomic.Uint64
	dropped atomic.Uint64
}

func newTranscript(sink *fifo.Sink) *transcript {
	t := &transcript{sink: sink}
	t.cond.L = &t.mu
	return t
}

// offer hands p to the writer without waiting; what does not fit is
// dropped. p may be reused once offer returns.
func (t *transcript) offer(p []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := min(len(p), transcriptBuffer-len(t.buf))
	if t.closed {
		n = 0
	}
	t.buf = append(t.buf, p[:n]...)
	t.dropped.Add(uint64(len(p) - n))
	t.cond.Broadcast()
}

// run writes what is offered until close; once the output FIFO is closed
// (the agent stops), the rest is dropped.
func (t *transcript) run() {
	var spare []byte
	for {
		t.mu.Lock()
		for len(t.buf) == 0 && !t.closed {
			t.cond.Wait()
		}
		chunk := t.buf
		if len(chunk) == 0 {
			t.mu.Unlock()
			return
		}
		t.buf = spare[:0]
		t.mu.Unlock()
		n, err := t.sink.Write(chunk)
		t.written.Add(uint64(n))
		t.mu.Lock()
		if err != nil {
			t.dropped.Add(uint64(len(chunk) - n + len(t.buf)))
			t.buf, t.closed = nil, true
		}
		spare = chunk
		if len(t.buf) == 0 {
			// Nothing came meanwhile: hold no buffer while the child is
			// quiet (an idle session); the next offer makes one.
			t.buf, spare = nil, nil
		}
		t.cond.Broadcast()
		t.mu.Unlock()
	}
}

// close makes run return once what waits is written; the caller closes
// the output FIFO, which ends a write waiting for a reader.
func (t *transcript) close() {
	t.mu.Lock()
	t.closed = true
	t.cond.Broadcast()
	t.mu.Unlock()
}
