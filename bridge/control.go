//go:build linux

package bridge

import (
	"errors"
	"os"

	"github.com/fifobridge/fifobridge/bridge/internal/follow"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// openControl opens, in stream mode, the control FIFO DIR/control as the
// agent's Source and claims it (follow.RoleControl), for the table to
// serve (sessions.Config.Control). Where it cannot be served now (missing
// without -create, not a FIFO, or one another end serves), the Source is
// pending and serves the first FIFO its follower (followFIFOs) accepts
// there: a FIFO made there later, or with -create one made again after a
// second. Without DIR, or without DIR/replies to answer in, there is no
// control FIFO, which is logged once.
func (a *agent) openControl() {
	if !a.servesControl() {
		if a.cfg.Mode == "stream" && a.dir == nil { // without replies/, prepareStream said why
			a.cfg.Log.Warn("no control fifo: the directory cannot be opened; signal and type -eof cannot reach the child")
		}
		return
	}
	src, err := follow.OpenSource(a.dir, protocol.StreamControl, follow.RoleControl, a.roles)
	switch {
	case err == nil:
	case errors.Is(err, os.ErrNotExist) && !a.cfg.Create:
		a.cfg.Log.Info("no control fifo yet: it is served once made (mkfifo -m 0620 "+a.dir.Join(protocol.StreamControl)+")", "err", err)
	default:
		a.cfg.Log.Warn("cannot serve the control fifo yet; it is followed, and served once it names a fifo again", "err", err)
	}
	a.mu.Lock()
	a.control = src
	a.mu.Unlock()
}

// controlFIFO is stream mode's control FIFO, or nil.
func (a *agent) controlFIFO() *fifo.Source {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.control
}

// servesControl says whether the agent serves a control FIFO: in stream
// mode, with DIR and DIR/replies, where its lines are answered.
func (a *agent) servesControl() bool {
	return a.cfg.Mode == "stream" && a.dir != nil && a.replies != nil
}
