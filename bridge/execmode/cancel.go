//go:build linux

package execmode

import (
	"errors"
	"fmt"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// errCanceled is the error frame of a request canceled while queued.
var errCanceled = errors.New("canceled")

// cancelLine acts on a line {"cancel":"ID"}: every queued request with
// that id is taken from the queue and gets one error frame "canceled";
// every running one gets the stop sequence (its exit frame says
// canceled). When no request with that id is queued or running, the
// cancel itself gets one error frame with that id, on the reply FIFO the
// line names (reply), else on the output FIFO.
func (e *Engine) cancelLine(req protocol.Parsed, reply *fifo.Reply) {
	id := req.Cancel
	if e.cancelQuietly(id) {
		if reply != nil {
			e.closeReply(reply)
		}
		return
	}
	e.cfg.Log.Info("cancel of a request that is not queued or running", "id", id)
	e.answer(id, reply, fmt.Errorf("cancel: no request with id %q is queued or running", id))
}

// cancelQuietly cancels every queued and running request with id, as
// cancelLine does, and reports whether there was one; it answers nothing
// for the cancel line itself.
func (e *Engine) cancelQuietly(id string) bool {
	queued, running := e.queue.take(id)
	for _, p := range queued {
		e.cfg.Log.Info("request canceled before it started", "id", id)
		e.reject(p.req.ID, p.reply, errCanceled)
	}
	for _, c := range running {
		c.cancel("a cancel line")
	}
	return len(queued) > 0 || len(running) > 0
}

// answer writes one error frame for id: on reply, which it closes, when
// given, else on the output FIFO (through the rejection queue).
func (e *Engine) answer(id string, reply *fifo.Reply, err error) {
	frame := answer.ErrorFrame(id, err)
	if reply == nil {
		e.rejections.put(frame)
		return
	}
	defer e.closeReply(reply)
	if werr := answer.WriteNow(reply, frame); werr != nil {
		e.cfg.Log.Warn("error frame dropped: its reply fifo takes nothing", "id", id, "err", werr)
	}
}
