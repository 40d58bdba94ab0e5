//go:build linux

package execmode

import (
	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/protocol"
)

// unanswerable handles a request line whose reply FIFO is there but cannot
// be opened. Its answer would carry the request's id and its reply's name,
// both its sender's secrets, so it goes to the log only, never to the
// shared output FIFO. A cancel still acts, quietly. When the agent may not
// or cannot open the FIFO (EACCES, EMFILE, ENFILE, ...), it removes its
// name: the sender, which watches its own reply FIFO's link count, learns
// at once that no answer will come. None of this needs a descriptor. A
// FIFO without a reader (its sender is gone) is left to the sweep.
func (e *Engine) unanswerable(req protocol.Parsed, lineErr, openErr error) {
	if lineErr == nil && req.IsCancel {
		e.cancelQuietly(req.Cancel)
	} else {
		e.rejected.Add(1)
	}
	e.cfg.Log.Warn("request not answered: its reply fifo cannot be opened", "id", req.ID, "err", openErr)
	defer e.poke()
	if e.replies != nil {
		answer.DropUnanswerable(e.cfg.Log, e.replies, req.Reply, openErr)
	}
}
