//go:build linux

package conversation

import (
	"log/slog"
	"sync"
)

// inputs writes the turns' input, and ^C typed on a terminal, to the
// child in the order given, from one goroutine that lives while there is
// something to write: a write the child does not take holds up only the
// writes after it, never the conversation.
type inputs struct {
	wg  *sync.WaitGroup // the conversation's: Wait waits for the writer
	log *slog.Logger

	mu      sync.Mutex
	todo    [][]byte
	writing bool
}

// write queues p for the child, and starts the writer if none runs.
func (q *inputs) write(to Child, p []byte) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.todo = append(q.todo, p)
	if q.writing {
		return
	}
	q.writing = true
	q.wg.Add(1)
	go func() {
		defer q.wg.Done()
		q.run(to)
	}()
}

// run writes what is queued, in order, until nothing is; a write that
// fails (the stream stops) is dropped.
func (q *inputs) run(to Child) {
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
		if err := to.WriteTurn(p); err != nil {
			q.log.Warn("a turn's input was not delivered", "err", err)
		}
	}
}
