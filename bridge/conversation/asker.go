//go:build linux

package conversation

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// asker is the ask whose turn it is, or whose turn just ended while its
// last frames are written: its reply FIFO, opened when the turn began,
// and the frames waiting for its reader. A writer goroutine of its own
// writes them, so that nothing else ever waits for an asker's reader; a
// watch notices at once when the reader leaves, even while nothing is
// written. Its fields below the line are under the turns' lock (t.mu).
type asker struct {
	t        *turns // whose turn it is
	req      protocol.ParsedAsk
	accepted time.Time
	reply    *fifo.Reply
	w        *bound.Writer // reply, under the rule
	gone     atomic.Bool   // the reader left

	begun   time.Time
	frames  [][]byte  // waiting for the writer
	held    int       // bytes in frames and in the write under way
	partial []byte    // the start of a character cut at the end of the answer so far
	more    sync.Cond // on t.mu: frames came, or done
	done    bool      // the last frame is queued
	failed  error     // a write failed or was given up: the rest is dropped
	cut     bool      // a stopping agent dropped part of the answer
}

// errReaderGone is an asker whose reader left.
var errReaderGone = errors.New("its asker went away")

// serve starts a's writer and watch; the writer, once done, ends the
// watch and hands the reply FIFO back to the turns (served).
func (a *asker) serve() {
	watched := make(chan struct{})
	a.t.wg.Add(2)
	a.reply.File().SetReadDeadline(time.Time{}) // a kept reply's watch before ended by one
	go func() {
		defer a.t.wg.Done()
		defer close(watched)
		if answer.ReaderGone(a.reply.File()) {
			a.gone.Store(true)
			a.t.note.wakeLoop()
		}
	}()
	go func() {
		defer a.t.wg.Done()
		a.write()
		a.reply.File().SetReadDeadline(time.Unix(1, 0)) // ends the watch
		<-watched
		a.w.Close()
		a.t.served(a)
	}()
}

// served takes a's reply FIFO back once its writer is done: it is kept
// for the asker's next ask (kept.go) when every frame was written, and
// closed otherwise; and the next turn may start.
func (t *turns) served(a *asker) {
	t.mu.Lock()
	if a.failed == nil && !a.gone.Load() {
		t.kept.keep(a.reply) // for the asker's next ask
	} else {
		a.reply.Close()
	}
	if t.last == a {
		t.last = nil
	}
	t.mu.Unlock()
	t.note.wakeLoop()
}

// write writes a's frames in order until the last one, those waiting
// together in one write (nextBatch). Once a write fails
// (the reader left, the FIFO was replaced, or the reader took nothing for
// the patience, or the stop's deadline passed) the rest is dropped; it
// returns once the turn is over, so that the turn is never left without
// its writer.
func (a *asker) write() {
	t := a.t
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		for (len(a.frames) == 0 || t.held(a)) && !a.done {
			a.more.Wait()
		}
		if len(a.frames) == 0 {
			return
		}
		if a.failed != nil {
			for _, f := range a.frames {
				a.held -= len(f)
			}
			clear(a.frames)
			a.frames = a.frames[:0]
			t.room.Broadcast()
			continue
		}
		f := a.nextBatch()
		t.mu.Unlock()
		_, err := a.w.Write(f)
		t.mu.Lock()
		a.held -= len(f)
		if err != nil && a.failed == nil {
			a.failed = a.writeFailed(err)
			t.note.wakeLoop()
		}
		t.room.Broadcast()
	}
}

// batchMax bounds the frames joined into one write: the first frame
// waiting, and those after it while they fit. A turn's answer and its
// end frame, queued together, then reach the asker in one write, which
// wakes it once.
const batchMax = 64 << 10

// nextBatch takes the frames to write next, under t.mu: the first one
// waiting, joined with those after it while the whole fits in batchMax.
func (a *asker) nextBatch() []byte {
	n, size := 1, len(a.frames[0])
	for n < len(a.frames) && size+len(a.frames[n]) <= batchMax {
		size += len(a.frames[n])
		n++
	}
	f := a.frames[0]
	if n > 1 {
		f = make([]byte, 0, size)
		for _, g := range a.frames[:n] {
			f = append(f, g...)
		}
	}
	clear(a.frames[:n])
	a.frames = a.frames[n:]
	return f
}

// writeFailed says why a write to a failed, and logs it.
func (a *asker) writeFailed(err error) error {
	log, rule := a.t.log, a.t.rule
	switch {
	case a.gone.Load():
		return errReaderGone
	case bound.GivenUp(err) && rule.Stopping():
		log.Warn("stopping: giving up on an asker who does not read", "id", a.req.ID)
	case bound.GivenUp(err):
		log.Warn("giving up on an asker who took nothing: it loses its turn", "id", a.req.ID, "after", rule.Patience())
		answer.DropGivenUp(log, a.reply)
	default:
		log.Info("ask's frames dropped: its reply fifo takes nothing", "id", a.req.ID, "err", err)
	}
	return err
}

// push queues frame for a, unless a write failed or the last frame is
// queued already.
func (a *asker) push(frame []byte) {
	if a.failed != nil || a.done {
		return
	}
	a.frames = append(a.frames, frame)
	a.held += len(frame)
	a.more.Broadcast()
}

// answer queues data, answer of a's turn, as one frame. A character cut
// at its end waits for its rest; while the agent stops, an answer that
// outgrows maxHeld is dropped rather than wait.
func (a *asker) answer(data []byte) {
	if len(a.partial) > 0 {
		data = append(a.partial, data...)
		a.partial = nil
	}
	whole, rest := protocol.CutIncompleteRune(data)
	if len(rest) > 0 {
		a.partial = append([]byte(nil), rest...)
	}
	if len(whole) == 0 {
		return
	}
	frame := protocol.AppendData(nil, a.req.ID, protocol.FrameAnswer, whole)
	if a.t.stopping && a.held+len(frame) > maxHeld {
		if !a.cut {
			a.t.log.Warn("stopping: dropping the rest of an answer its asker does not take", "id", a.req.ID)
		}
		a.cut = true
		return
	}
	a.push(frame)
}

// flushPartial queues the cut character left at the end of a's answer.
func (a *asker) flushPartial() {
	if len(a.partial) > 0 {
		a.push(protocol.AppendData(nil, a.req.ID, protocol.FrameAnswer, a.partial))
		a.partial = nil
	}
}
