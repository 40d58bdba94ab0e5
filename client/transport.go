//go:build linux

package client

import (
	"context"
	"errors"
)

// This file is the transport every front door of the package rides: one
// line written into an input FIFO the agent serves, naming a private
// reply FIFO, and the frames of the line's id read back from that FIFO
// up to the last one. Its parts, one concern a file:
//
//   - reply.go, key.go: the private reply FIFO in DIR/replies, its name
//     (128 random bits), its mode and who may learn its name;
//   - input.go, served.go, write.go: the input FIFO the line goes to,
//     checked on the descriptor written to against the FIFO the status
//     file names, and the line written in one piece (atomic, or under
//     the FIFO's lock);
//   - relay.go, output.go, wake.go, agent.go: the frames read and
//     relayed in order, each write abandonable, the watch on an agent
//     that goes away before the first frame, and the give-up when the
//     context ends (SIGINT, SIGTERM, -timeout) or the request's limit
//     passes;
//   - line.go, cancel.go, dir.go: a line's encoding, the cancel line,
//     and DIR entered once;
//   - errors.go, result.go: what a trip returns.
//
// The front doors are thin over it: send.go (Send), ask.go (Ask),
// asker.go, askerwrite.go and askerident.go (an Asker, which keeps the
// transport's ends open from turn to turn), control.go and session.go
// (Sessions' open, close and ls), wait.go (whether an agent serves DIR
// yet).

// trip is one round trip over the transport. Send, Ask and the control
// lines of Sessions make a reply FIFO and open the input FIFO for each
// trip; an Asker gives its own ends, kept from turn to turn.
type trip struct {
	in    input // the input FIFO the line goes to
	relay relay // the line's id, and where its frames go
	// line encodes the line, naming the reply FIFO reply.
	line func(reply string) ([]byte, error)
	// prepare, when set, is given the reply FIFO the trip made before
	// the line is written (a watch gives it its group).
	prepare func(reply *replyFIFO)
	// reply, write and watch are an Asker's own: its reply FIFO (not
	// removed), how it writes the line into the DIR/ask it keeps open,
	// and its watch. When nil, the trip makes a reply FIFO in
	// DIR/replies and removes it on every way out, writes the line with
	// writeRequest, and watches the agent as newAgentWatch does.
	reply *replyFIFO
	write func(ctx context.Context, line []byte) error
	watch *agentWatch
	// gaveUp, when set, is told that the trip gave up before the last
	// frame, its context ended (or, once the line was written, its limit
	// passed): whether the line was written, and the Result so far, while
	// the reply FIFO is still there.
	gaveUp func(reply *replyFIFO, res *Result, written bool)
}

// run makes the trip, and returns the Result of its last frame or why
// there was none.
func (t *trip) run(ctx context.Context) (Result, error) {
	reply := t.reply
	if reply == nil {
		r, err := makeReply(t.in.dir)
		if err != nil {
			return Result{}, err
		}
		defer r.remove()
		reply = r
		if t.prepare != nil {
			t.prepare(r)
		}
	}
	line, err := t.line(reply.name)
	if err != nil {
		return Result{}, err
	}
	watch := t.watch
	if watch == nil {
		watch = newAgentWatch(t.in)
	}
	if err := t.send(ctx, line, reply); err != nil {
		if ctx.Err() != nil && t.gaveUp != nil {
			t.gaveUp(reply, &Result{}, false)
		}
		return Result{}, err
	}
	res, err := t.relay.run(ctx, reply, watch)
	if err != nil && (ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)) && t.gaveUp != nil {
		t.gaveUp(reply, &res, true)
	}
	return res, err
}

// send writes line into the input FIFO.
func (t *trip) send(ctx context.Context, line []byte, reply *replyFIFO) error {
	if t.write != nil {
		return t.write(ctx, line)
	}
	return writeRequest(ctx, t.in, line, reply)
}
