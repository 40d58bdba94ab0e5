//go:build linux

package execmode

import (
	"context"
	"errors"
	"strconv"

	"github.com/fifobridge/fifobridge/bridge/internal/answer"
	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
)

// serve reads request lines and starts each, waiting for a free slot first.
// When the Source is closed, the lines it had already read are refused.
func (e *Engine) serve(ctx context.Context) {
	lines := protocol.NewLineReader(e.src, e.cfg.MaxRequest)
	lines.Each(func(line []byte, err error) { e.accept(ctx, line, err) }) // until the Source is closed: stopping
	e.mu.Lock()
	unread := e.unread
	e.mu.Unlock()
	for _, line := range protocol.SplitLines(append(lines.Rest(), unread...)) {
		e.accept(ctx, line, nil)
	}
}

// accept handles one request line (or the *protocol.TooLongError that
// stands for one): it skips a blank line, acts on a cancel, and queues any
// other request or rejects it with one error frame. It never waits for a
// reader; it waits for room in the queue, and for room in the rejection
// queue while the output FIFO's reader takes error frames.
func (e *Engine) accept(ctx context.Context, line []byte, err error) {
	e.idle.Touch() // a line read is activity, even one refused
	var tooLong *protocol.TooLongError
	if err == nil && protocol.IsBlank(line) {
		return
	}
	var req protocol.Parsed
	if errors.As(err, &tooLong) {
		req.ID, req.Reply = protocol.SalvageHead(tooLong.Head)
	} else {
		// On error, req still names the id and reply it could read.
		req, err = protocol.ParseRequest(line)
	}
	if errors.Is(err, protocol.ErrDamaged) {
		e.damaged(req, err)
		return
	}
	if req.ID == "" {
		req.ID = e.newID()
	}
	// Even a request that is refused is answered on its reply FIFO when it
	// names a usable one: that is where its sender listens. One that names
	// no usable reply FIFO is answered on the output FIFO; one whose reply
	// FIFO is there but cannot be opened, nowhere but the log.
	var reply *fifo.Reply
	if req.Reply != "" {
		var rerr error
		if reply, rerr = e.openReply(req.Reply); rerr != nil && !answer.NotAReply(rerr) {
			e.unanswerable(req, err, rerr)
			return
		}
		if err == nil && !req.IsCancel { // a cancel acts even so
			err = rerr
		}
	}
	if err == nil && req.IsCancel {
		e.cancelLine(req, reply)
		return
	}
	if err == nil && len(req.Args) > 0 && !e.cfg.AllowArgs {
		err = errors.New("args given but the agent runs without -allow-args")
	}
	if err == nil {
		err = e.queue.put(ctx, &pending{req: req, reply: reply, cancel: newCancel()})
	}
	if err != nil {
		e.reject(req.ID, reply, err)
	}
}

// takeSlot waits for a free slot, unless the agent is stopping.
func (e *Engine) takeSlot(ctx context.Context) error {
	if ctx.Err() != nil {
		return errStopping
	}
	select {
	case e.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return errStopping
	}
}

func (e *Engine) newID() string { return "r" + strconv.FormatUint(e.nextID.Add(1), 10) }

// openReply opens replies/name for writing without waiting, through the
// directory's descriptor: a FIFO with one name, never a link or another
// file, with a reader on it. Nothing is created or written when it is
// anything else. Until closeReply, the name counts as named by a request,
// and the sweep leaves it alone.
func (e *Engine) openReply(name string) (*fifo.Reply, error) {
	if e.replies == nil {
		return nil, errors.New("reply fifo: the agent has no replies directory")
	}
	r, err := fifo.OpenReply(e.replies, name) // its errors do not name it
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	e.replyNames[name]++
	e.mu.Unlock()
	return r, nil
}

// closeReply closes a reply FIFO openReply opened.
func (e *Engine) closeReply(r *fifo.Reply) {
	r.Close()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.replyNames[r.Name()]--; e.replyNames[r.Name()] <= 0 {
		delete(e.replyNames, r.Name())
	}
}
