//go:build linux

package execmode

import (
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/bridge/internal/bound"
	"github.com/fifobridge/fifobridge/fifo"
)

// errReaderGone is a reply FIFO whose last reader closed it.
var errReaderGone = errors.New("its reply reader went away")

// frames writes one request's frames, in the order write is called, to its
// reply FIFO or to the output FIFO. The request's goroutines write through
// it, one frame at a time; none of them waits longer than the rule
// (package bound) allows for a reader that takes nothing, while the
// request runs too. Once a write fails (the reader left or took nothing
// for the patience, the reply FIFO was replaced, a stop gave the write
// up) the rest is dropped and the request is canceled: its tree is
// stopped and its slot freed, and a reader that stays but never reads
// holds nothing of the agent's.
type frames struct {
	id     string
	reply  *fifo.Reply   // nil: the output FIFO
	writer *bound.Writer // writes to reply, under the rule
	out    *outFIFO
	rule   *bound.Rule
	log    *slog.Logger
	cancel func(reason string)

	wmu sync.Mutex // one frame at a time, in order

	left     atomic.Bool
	leftOnce sync.Once
	watched  chan struct{} // the reader watch returned; nil: no reply
}

// newFrames makes the writer of one request's frames. With a reply FIFO,
// a watch in the runtime's poller (no polling) cancels the request as soon
// as the FIFO's last reader leaves, even while the child is quiet; close
// ends it.
func newFrames(id string, reply *fifo.Reply, out *outFIFO, rule *bound.Rule, log *slog.Logger, cancel func(string)) *frames {
	w := &frames{id: id, reply: reply, out: out, rule: rule, log: log, cancel: cancel}
	if reply != nil {
		w.writer = rule.NewWriter(reply)
		w.watched = make(chan struct{})
		go func() { defer close(w.watched); w.watchReader() }()
	}
	return w
}

// write writes frame, or drops it once a write failed.
func (w *frames) write(frame []byte) {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if w.left.Load() {
		return
	}
	var err error
	if w.reply == nil {
		err = w.out.write(frame, w.rule.Patience(), func() { w.leave(errNobodyReads) })
	} else {
		_, err = w.writer.Write(frame)
	}
	if err != nil {
		w.leave(err)
	}
}

// leave drops the rest of the frames, says why, once, and cancels the
// request (which does nothing to one that has ended).
func (w *frames) leave(err error) {
	w.leftOnce.Do(func() {
		w.left.Store(true)
		var reason string
		switch {
		case w.reply == nil && errors.Is(err, errNobodyReads):
			w.log.Warn("giving up on a request's frames: the output fifo has taken nothing", "id", w.id, "after", w.rule.Patience())
			reason = "its frames were given up"
		case w.reply == nil:
			w.log.Debug("dropping the rest of a request's frames: the output fifo was given up", "id", w.id, "err", err)
			return // at a stop's deadline: the request is stopped anyway
		case bound.GivenUp(err) && w.rule.Stopping():
			w.log.Warn("stopping: giving up on a reply fifo nobody reads", "id", w.id)
			reason = "its frames were given up"
		case bound.GivenUp(err):
			w.log.Warn("giving up on a reply fifo whose reader takes nothing", "id", w.id, "after", w.rule.Patience())
			answer.DropGivenUp(w.log, w.reply)
			reason = "its frames were given up"
		case errors.Is(err, fifo.ErrReplaced):
			reason = "its reply fifo was replaced or moved"
		default:
			reason = errReaderGone.Error()
		}
		w.cancel(reason)
	})
}

// watchReader waits until the reply FIFO has no reader left (readerGone),
// and leaves then. close ends it with a past read deadline.
func (w *frames) watchReader() {
	if answer.ReaderGone(w.reply.File()) {
		w.leave(errReaderGone)
	}
}

// close ends the reader watch and hands the reply FIFO back to release;
// every write must be over.
func (w *frames) close(release func(*fifo.Reply)) {
	if w.reply == nil {
		return
	}
	w.reply.File().SetReadDeadline(time.Unix(1, 0))
	<-w.watched
	w.writer.Close()
	release(w.reply)
}
