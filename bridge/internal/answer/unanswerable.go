//go:build linux

package answer

import (
	"errors"
	"io/fs"
	"log/slog"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/sharedir"
)

// NotAReply says whether err, from opening a request's reply FIFO, means
// that the name is no usable reply FIFO at all (missing, a link, another
// file, a FIFO with more names): nobody can be listening there, so the
// error frame goes to the output FIFO, as for any bad request (its text
// does not name the FIFO: see fifo.Unnamed).
func NotAReply(err error) bool {
	return errors.Is(err, fifo.ErrNotFIFO) || errors.Is(err, sharedir.ErrSymlink) || errors.Is(err, fs.ErrNotExist)
}

// DropUnanswerable removes the name of a reply FIFO that is there but that
// the agent may not or cannot open (openErr), so that its sender learns at
// once that no answer will come. A FIFO without a reader is left alone.
func DropUnanswerable(log *slog.Logger, replies *sharedir.Dir, name string, openErr error) {
	if errors.Is(openErr, fifo.ErrNoReader) {
		return
	}
	if err := fifo.RemoveAt(replies, name); err != nil {
		log.Warn("cannot remove the reply fifo that could not be opened", "err", fifo.Unnamed("remove reply fifo", err))
	}
}

// DropGivenUp removes the name of reply, whose reader took nothing for the
// patience and lost its request or turn, before the agent closes its end:
// a client that reads again then learns that the agent gave it up (the
// name is gone, and the agent had written to it), not that it timed out
// or that the agent went away. A name that no longer names reply's FIFO
// is left alone.
func DropGivenUp(log *slog.Logger, reply *fifo.Reply) {
	if err := reply.Remove(); err != nil && !errors.Is(err, fifo.ErrReplaced) {
		log.Warn("cannot remove the reply fifo of a reader given up", "err", err)
	}
}

// RefuseDamaged is what a damaged line of any kind (a "control line", an
// "ask line") gets: one warning, no answer, and its reply FIFO, if it
// named one, dropped (DropDamaged).
func RefuseDamaged(log *slog.Logger, replies *sharedir.Dir, kind, reply string, err error) {
	log.Warn(kind+" refused: it may hold another writer's bytes", "err", err)
	if reply != "" {
		DropDamaged(log, replies, reply)
	}
}

// DropDamaged removes the reply FIFO name that a damaged line's first
// piece names (see protocol.ErrDamaged), so that its sender learns at once
// that no answer will come; anything but a FIFO is left alone. Nothing is
// written to it: the line's reply may be that of the writer who damaged
// it.
func DropDamaged(log *slog.Logger, replies *sharedir.Dir, name string) {
	err := fifo.RemoveAt(replies, name)
	if err != nil && !NotAReply(err) {
		log.Warn("cannot remove the reply fifo of a damaged line", "err", fifo.Unnamed("remove reply fifo", err))
	}
}
