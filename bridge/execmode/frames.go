package execmode

import (
	"errors"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/fifo"
)

// errReaderGone is a reply FIFO whose last reader closed it.
var errReaderGone = errors.New("its reply reader went away")

// frames writes one request's frames, in the order write is called, to its
// reply FIFO or to the output FIFO. The request's goroutines write through
// it, one frame at a time; none of them waits longer than giveUp allows
// once the request has ended or a stop began. Once a write fails (the
// reader left, the reply FIFO was replaced, a write was given up) the rest
// is dropped, and a request answered on a reply FIFO is canceled.
type frames struct {
	id     string
	reply  *fifo.Reply // nil: the output FIFO
	out    *outFIFO
	g      *giveUp
	log    *slog.Logger
	cancel func(reason string)

	wmu sync.Mutex // one frame at a time, in order

	dmu     sync.Mutex    // ends with the reply's write deadline
	isEnded bool          // the request's child has ended
	ended   chan struct{} // closed then

	left     atomic.Bool
	leftOnce sync.Once
	watched  chan struct{} // the reader watch returned; nil: no reply
}

// newFrames makes the writer of one request's frames. With a reply FIFO,
// a watch in the runtime's poller (no polling) cancels the request as soon
// as the FIFO's last reader leaves, even while the child is quiet; close
// ends it.
func newFrames(id string, reply *fifo.Reply, out *outFIFO, g *giveUp, log *slog.Logger, cancel func(string)) *frames {
	w := &frames{id: id, reply: reply, out: out, g: g, log: log, cancel: cancel, ended: make(chan struct{})}
	if reply != nil {
		g.watch(w)
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
		err = w.out.write(frame, w.ended, w.g.patience)
	} else {
		w.armDeadline()
		_, err = w.reply.Write(frame)
	}
	if err != nil {
		w.leave(err)
	}
}

// end says the request's child has ended: from now on its writes wait no
// longer than giveUp's patience, the one under way too.
func (w *frames) end() {
	w.dmu.Lock()
	defer w.dmu.Unlock()
	if w.isEnded {
		return
	}
	w.isEnded = true
	close(w.ended)
	if w.reply != nil {
		w.reply.SetWriteDeadline(w.g.replyDeadline(true))
	}
}

// armDeadline gives the reply FIFO the write deadline giveUp says a write
// beginning now has; a stop calls it for the write under way.
func (w *frames) armDeadline() {
	w.dmu.Lock()
	defer w.dmu.Unlock()
	w.reply.SetWriteDeadline(w.g.replyDeadline(w.isEnded))
}

// leave drops the rest of the frames, says why, and cancels a request
// answered on its reply FIFO (the output FIFO's reader may come back).
func (w *frames) leave(err error) {
	w.leftOnce.Do(func() {
		w.left.Store(true)
		reason := err.Error()
		switch {
		case w.reply == nil && errors.Is(err, errNobodyReads):
			w.log.Warn("dropping the rest of a finished request's frames: nobody reads the output fifo", "id", w.id, "after", w.g.patience)
		case w.reply == nil:
			w.log.Debug("dropping the rest of a request's frames: the output fifo was given up", "id", w.id, "err", err)
		case os.IsTimeout(err) && w.g.stopping():
			w.log.Warn("stopping: giving up on a reply fifo nobody reads", "id", w.id)
			reason = "its frames were given up"
		case os.IsTimeout(err):
			w.log.Warn("giving up on a reply fifo whose reader does not read", "id", w.id, "after", w.g.patience)
			reason = "its frames were given up"
		case errors.Is(err, fifo.ErrReplaced):
			reason = "its reply fifo was replaced or moved"
		default:
			reason = errReaderGone.Error()
		}
		if w.reply != nil {
			w.cancel(reason)
		}
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
	w.g.forget(w)
	release(w.reply)
}
