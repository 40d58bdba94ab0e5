package bridge

import (
	"errors"
	"io/fs"
	"log/slog"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// notAReply says whether err, from opening a request's reply FIFO, means
// that the name is no usable reply FIFO at all (missing, a link, another
// file, a FIFO with more names): nobody can be listening there, so the
// error frame goes to the output FIFO, as for any bad request.
func notAReply(err error) bool {
	return errors.Is(err, fifo.ErrNotFIFO) || errors.Is(err, fifo.ErrSymlink) || errors.Is(err, fs.ErrNotExist)
}

// unanswerable handles a request line whose reply FIFO is there but cannot
// be opened. Its answer would carry the request's id and its reply's name,
// both its sender's secrets, so it goes to the log only, never to the
// shared output FIFO. A cancel still acts, quietly. When the agent may not
// or cannot open the FIFO (EACCES, EMFILE, ENFILE, ...), it removes its
// name: the sender, which watches its own reply FIFO's link count, learns
// at once that no answer will come. None of this needs a descriptor. A
// FIFO without a reader (its sender is gone) is left to the sweep.
func (e *execMode) unanswerable(req protocol.Parsed, lineErr, openErr error) {
	if lineErr == nil && req.IsCancel {
		e.cancelQuietly(req.Cancel)
	} else {
		e.rejected.Add(1)
	}
	e.cfg.Log.Warn("request not answered: its reply fifo cannot be opened", "id", req.ID, "err", openErr)
	defer e.poke()
	if e.replies != nil {
		dropUnanswerable(e.cfg.Log, e.replies, req.Reply, openErr)
	}
}

// dropUnanswerable removes the name of a reply FIFO that is there but that
// the agent may not or cannot open (openErr), so that its sender learns at
// once that no answer will come. A FIFO without a reader is left alone.
func dropUnanswerable(log *slog.Logger, replies *fifo.Dir, name string, openErr error) {
	if errors.Is(openErr, fifo.ErrNoReader) {
		return
	}
	if err := replies.RemoveFIFO(name); err != nil {
		log.Warn("cannot remove the reply fifo that could not be opened", "reply", name, "err", err)
	}
}
