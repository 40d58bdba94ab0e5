//go:build linux

package stream

import (
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/ttytext"
	"github.com/fifobridge/fifobridge/protocol"
)

// watchHeld is the most of the child's output held in the agent for one
// watcher: what comes while it is full is dropped and counted, and the
// watcher is told how much once it has taken what was held.
const watchHeld = 1 << 20

// watchPiece is the most of the output one output frame carries.
const watchPiece = 16 << 10

// watcher is one watch of the child's output: its reply FIFO, the output
// waiting for its reader, and two goroutines of its own, owned by its
// fanout: write, the one writer of its reply FIFO, and watchReader,
// which sees its reader leave while nothing is written. Nothing else
// ever waits for its reader: offer takes what fits and drops the rest.
type watcher struct {
	fan   *fanout
	id    string
	pid   int // the child started last when the watch began
	reply *fifo.Reply
	w     *bound.Writer // reply, under the rule
	began time.Time
	gone  atomic.Bool // its reader left

	mu       sync.Mutex
	more     sync.Cond        // on mu: output came, the watch is over, or its reader left
	clean    *ttytext.Cleaner // on a terminal unless raw; nil: the output as written
	buf      []byte           // output waiting for the writer (cleaned); nil when none
	inFlight int              // bytes of output in the frame being written
	lost     int64            // bytes dropped since the writer last caught up
	over     bool             // last is queued: no more output is taken
	last     []byte           // the frame that ends the watch
}

// offer takes p, output of the child (cleaned first on a terminal), as
// far as watchHeld allows, without waiting. Once a byte was dropped,
// every byte is, until the writer has written what came before and
// takes the count for its lost frame. p is not kept.
func (w *watcher) offer(p []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.over {
		return
	}
	old := len(w.buf)
	if w.clean != nil {
		w.buf = w.clean.Clean(w.buf, p)
	} else {
		w.buf = append(w.buf, p...)
	}
	keep := old
	if w.lost == 0 {
		keep = max(old, min(len(w.buf), watchHeld-w.inFlight))
	}
	w.lost += int64(len(w.buf) - keep)
	if w.buf = w.buf[:keep]; keep == 0 {
		w.buf = nil // nothing held: no buffer either
	}
	if len(w.buf) > old || w.lost > 0 {
		w.more.Signal()
	}
}

// end queues last, the frame that ends the watch, after the output held:
// from now on nothing more is taken.
func (w *watcher) end(last []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.over {
		return
	}
	if w.clean != nil {
		w.buf = w.clean.Flush(w.buf)
	}
	w.over, w.last = true, last
	w.more.Signal()
}

// serve starts the watcher's writer and the watch on its reader; the
// writer, once done, ends the watch and lets the reply FIFO go.
func (w *watcher) serve() {
	watched := make(chan struct{})
	w.fan.wg.Add(2)
	go func() {
		defer w.fan.wg.Done()
		defer close(watched)
		w.watchReader()
	}()
	go func() {
		defer w.fan.wg.Done()
		err := w.write()
		w.reply.File().SetReadDeadline(time.Unix(1, 0)) // ends watchReader
		<-watched
		w.w.Close()
		w.letGo(err)
	}()
}

// watchReader waits until the watcher's reader leaves (its watch client
// went away), and then wakes the writer, or until write is done.
func (w *watcher) watchReader() {
	if !answer.ReaderGone(w.reply.File()) {
		return
	}
	w.gone.Store(true)
	w.mu.Lock()
	w.more.Signal()
	w.mu.Unlock()
}

// write writes the watching frame, then the output as it comes, lost
// frames where output was dropped, and the frame that ends the watch. It
// returns nil once that was written, or why it stopped: the reader left,
// a write failed, or the reader of a watch that is over took nothing for
// the patience (or the stop's deadline passed).
func (w *watcher) write() error {
	if err := w.send(protocol.AppendWatching(nil, w.id, w.pid)); err != nil {
		return err
	}
	for {
		frame, last := w.next()
		if frame == nil {
			return errReaderGone
		}
		err := w.send(frame)
		w.mu.Lock()
		w.inFlight = 0
		w.mu.Unlock()
		if err != nil || last {
			return err
		}
	}
}

// next waits for the next frame to write: output, a lost frame once the
// output before the drop is written, or the last frame; nil once the
// reader left. last says it is the last one.
func (w *watcher) next() (frame []byte, last bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for !w.gone.Load() {
		if len(w.buf) > 0 {
			if piece := w.piece(); len(piece) > 0 {
				w.inFlight = len(piece)
				frame = protocol.AppendData(nil, w.id, protocol.FrameOutput, piece)
				if w.buf = w.buf[len(piece):]; len(w.buf) == 0 {
					w.buf = nil // a watcher that keeps up holds no buffer
				}
				return frame, false
			}
		}
		switch {
		case len(w.buf) == 0 && w.lost > 0:
			frame, w.lost = protocol.AppendLost(nil, w.id, w.lost), 0
			return frame, false
		case len(w.buf) == 0 && w.over:
			return w.last, true
		}
		w.more.Wait()
	}
	return nil, false
}

// piece is the output for the next frame: at most watchPiece bytes, cut
// before a character cut short at its end (it waits for its rest), but
// for what must go now: the output before a drop, or before the end.
func (w *watcher) piece() []byte {
	piece := w.buf[:min(len(w.buf), watchPiece)]
	whole, _ := protocol.CutIncompleteRune(piece)
	if len(whole) > 0 || w.lost > 0 || w.over {
		if len(whole) == 0 {
			whole = piece
		}
		return whole
	}
	return nil
}

// send writes frame under the rule. A watch that goes on is never given
// up for a reader that takes nothing: its writer waits on, one patience
// at a time, while offer drops output for it (and its watchReader sees it
// leave). A watch that is over is: its reader gets the patience to take
// its last frames, and at a stop, the stop's deadline.
func (w *watcher) send(frame []byte) error {
	for {
		n, err := w.w.Write(frame)
		frame = frame[n:]
		if err == nil || !bound.GivenUp(err) || w.gone.Load() || w.fan.rule.Stopping() || w.isOver() {
			return err
		}
	}
}

// isOver reports whether the watch is over: its last frame is queued.
func (w *watcher) isOver() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.over
}

// letGo forgets the watcher and closes its reply FIFO once its writer is
// done, err saying why it stopped: a reader that took nothing for the
// patience loses the FIFO's name too, so that its client learns that it
// was given up (answer.DropGivenUp).
func (w *watcher) letGo(err error) {
	w.mu.Lock()
	w.over, w.buf = true, nil
	w.mu.Unlock()
	w.fan.remove(w)
	log, rule := w.fan.log, w.fan.rule
	switch {
	case err == nil:
		log.Info("watch ended", "id", w.id)
	case errors.Is(err, errReaderGone) || w.gone.Load():
		log.Info("watch ended: its watcher went away", "id", w.id)
	case bound.GivenUp(err) && rule.Stopping():
		log.Warn("stopping: giving up on a watcher who does not read", "id", w.id)
	case bound.GivenUp(err):
		log.Warn("giving up on a watcher who took nothing of its last frames", "id", w.id, "after", rule.Patience())
		answer.DropGivenUp(log, w.reply)
	default:
		log.Info("watch ended: its reply fifo takes nothing", "id", w.id, "err", err)
	}
	w.reply.Close()
}

// errReaderGone is a watcher whose reader left.
var errReaderGone = errors.New("its watcher went away")
