package stream

import (
	"errors"
	"strconv"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
)

// AskName is the control FIFO of a conversation, in DIR.
const AskName = "ask"

// serveAsks reads ask lines from src until it is closed, and queues each
// ask or answers it with one error frame. An ask is answered on its own
// reply FIFO only: one that names no usable reply FIFO, or one that cannot
// be opened, is answered in the log alone (the output FIFO is the child's
// transcript, and a reply's name and id are its sender's secrets).
func (c *conversation) serveAsks(src *fifo.Source, replies *sharedir.Dir) {
	lines := protocol.NewLineReader(src, c.cfg.MaxRequest)
	for {
		line, err := lines.Next()
		var tooLong *protocol.TooLongError
		if err != nil && !errors.As(err, &tooLong) {
			return // the Source was closed: stopping
		}
		if err == nil && protocol.IsBlank(line) {
			continue
		}
		c.accept(line, err, replies)
	}
}

// accept handles one ask line, or the *protocol.TooLongError that stands
// for one.
func (c *conversation) accept(line []byte, err error, replies *sharedir.Dir) {
	var req protocol.ParsedAsk
	var tooLong *protocol.TooLongError
	if errors.As(err, &tooLong) {
		req.ID, req.Reply = protocol.SalvageHead(tooLong.Head)
	} else {
		req, err = protocol.ParseAsk(line)
	}
	if req.ID == "" {
		req.ID = c.newID() // as exec mode does: every frame names its ask
	}
	if req.Reply == "" || replies == nil {
		c.cfg.Log.Warn("ask not answered: it names no reply fifo", "id", req.ID, "err", err)
		return
	}
	reply, rerr := fifo.OpenReply(replies, req.Reply)
	if rerr != nil {
		c.cfg.Log.Warn("ask not answered: its reply fifo cannot be opened", "id", req.ID, "err", rerr)
		if !answer.NotAReply(rerr) {
			answer.DropUnanswerable(c.cfg.Log, replies, req.Reply, rerr)
		}
		return
	}
	if err != nil {
		c.refuse(req.ID, reply, err)
		return
	}
	a := &askTurn{req: req}
	a.out = newAskReply(req.ID, reply, c.cfg.Log, c.wakeLoop, &c.replies)
	c.track(a.out)
	if err := c.enqueue(a); err != nil {
		c.cfg.Log.Info("ask refused", "id", req.ID, "err", err)
		a.out.send(answer.ErrorFrame(req.ID, err))
		a.out.finish()
	}
}

// refuse answers a bad ask with one error frame, without waiting.
func (c *conversation) refuse(id string, reply *fifo.Reply, err error) {
	c.cfg.Log.Warn("ask refused", "id", id, "err", err)
	if werr := answer.WriteNow(reply, answer.ErrorFrame(id, err)); werr != nil {
		c.cfg.Log.Warn("error frame dropped: its reply fifo takes nothing", "id", id, "err", werr)
	}
	reply.Close()
}

// newID names an ask that came without an id; only the ask reader calls it.
func (c *conversation) newID() string {
	c.nextID++
	return "a" + strconv.FormatUint(c.nextID, 10)
}
