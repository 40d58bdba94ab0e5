//go:build linux

package conversation

import (
	"log/slog"
	"sync"
)

// inputs writes to the child: the turns' input, and the interrupts, ^C
// typed on a terminal or SIGINT on pipes. It writes in the order given:
// at once, when nothing waits to be written and the child takes it
// without a wait (Child.WriteTurnNow: a turn asked of a child at its
// prompt reaches it without a hand-off to another goroutine, each of
// which can cost the wake-up of an idle CPU), otherwise from one
// goroutine that lives while there is something to write: a write the
// child does not take holds up only the writes after it, never the
// conversation. It has its own lock, taken under the conversation's.
type inputs struct {
	to       Child
	terminal bool            // the child runs on a terminal: interrupts are typed
	wg       *sync.WaitGroup // the conversation's: Wait waits for the writer
	log      *slog.Logger

	mu      sync.Mutex
	todo    [][]byte
	writing bool
}

// interrupt interrupts the child's foreground work: on a terminal ^C is
// typed, after the input before it; on pipes its process group gets
// SIGINT.
func (q *inputs) interrupt() {
	if q.terminal {
		q.write([]byte{0x03})
		return
	}
	q.to.Interrupt()
}

// write queues p for the child, and starts the writer if none runs.
func (q *inputs) write(p []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.writing && q.to.WriteTurnNow(p) {
		return
	}
	q.todo = append(q.todo, p)
	if q.writing {
		return
	}
	q.writing = true
	q.wg.Add(1)
	go func() {
		defer q.wg.Done()
		q.run()
	}()
}

// run writes what is queued, in order, until nothing is; a write that
// fails (the stream stops) is dropped.
func (q *inputs) run() {
	for {
		q.mu.Lock()
		if len(q.todo) == 0 {
			q.writing = false
			q.mu.Unlock()
			return
		}
		p := q.todo[0]
		q.todo[0] = nil
		q.todo = q.todo[1:]
		q.mu.Unlock()
		if err := q.to.WriteTurn(p); err != nil {
			q.log.Warn("a turn's input was not delivered", "err", err)
		}
	}
}
