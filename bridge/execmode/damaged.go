//go:build linux

package execmode

import (
	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/protocol"
)

// damaged refuses a request line that may hold bytes of two writers
// (protocol.ErrDamaged: another writer put bytes between the pieces of a
// long line, or cut it short). Its reply name may be that other writer's,
// and its id and reply its sender's secrets, so it is answered on no
// reply FIFO and its error frame on the output FIFO carries an id of the
// agent's: the line's is not echoed. The reply FIFO its first, atomic
// piece names is removed instead (answer.DropDamaged): that piece is one
// writer's, and a send that wrote it learns at once that no answer will
// come; not one that a queued or running request holds (a client that
// uses one reply FIFO for many requests). A line that was a cancel
// cancels nothing.
func (e *Engine) damaged(req protocol.Parsed, err error) {
	e.rejected.Add(1)
	e.cfg.Log.Warn("request line refused: it may hold another writer's bytes", "err", err)
	defer e.poke()
	if req.Reply != "" && e.replies != nil && !e.named(req.Reply) {
		answer.DropDamaged(e.cfg.Log, e.replies, req.Reply)
	}
	e.rejections.put(answer.ErrorFrame(e.newID(), err))
}
