package bridge

import (
	"errors"
	"io/fs"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// unanswerable handles a request line whose reply FIFO the agent cannot
// open. Its answer would carry the request's id and its reply's name, both
// its sender's secrets, so it goes to the log only, never to the shared
// output FIFO. A cancel still acts, quietly. When the FIFO is there and is
// a FIFO, but the agent may not or cannot open it (EACCES, EMFILE, ENFILE,
// ...), the agent removes its name: the sender, which watches its own
// reply FIFO's link count, learns at once that no answer will come. None
// of this needs a descriptor. A FIFO without a reader (its sender is gone),
// a missing one, a link or another file is left alone.
func (e *execMode) unanswerable(req protocol.Parsed, lineErr, openErr error) {
	if lineErr == nil && req.IsCancel {
		e.cancelQuietly(req.Cancel)
	} else {
		e.rejected.Add(1)
	}
	e.cfg.Log.Warn("request not answered: its reply fifo cannot be opened", "id", req.ID, "err", openErr)
	defer e.poke()
	if e.replies == nil || errors.Is(openErr, fifo.ErrNoReader) || errors.Is(openErr, fifo.ErrNotFIFO) ||
		errors.Is(openErr, fifo.ErrSymlink) || errors.Is(openErr, fs.ErrNotExist) {
		return
	}
	if err := e.replies.RemoveFIFO(req.Reply); err != nil {
		e.cfg.Log.Warn("cannot remove the reply fifo that could not be opened", "id", req.ID, "err", err)
	}
}
