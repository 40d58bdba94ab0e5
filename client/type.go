//go:build linux

package client

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/fifobridge/fifobridge/protocol"
)

// TypeOptions is text to type into a child's input.
type TypeOptions struct {
	Dir string // the agent's directory
	// Session names the session whose input is typed into; "" is stream
	// mode's DIR/in.
	Session string
	// Input is written as it is (the caller adds a newline, if any).
	Input []byte
	// EOF, once Input is written, ends the child's input once the agent
	// has read it: the control line "op":"eof", answered once done.
	EOF bool
	// Limit is how long the agent may wait to end the input (the eof
	// line's timeout); 0: until it is done or the child ends. It is cut
	// to what is left of ctx's deadline, so that the agent gives the
	// wait up when Type does.
	Limit time.Duration
	// Warn, when set, is told about what the eof line's trip ignores on
	// its reply FIFO, as Send's is.
	Warn func(msg string)
}

// Type writes o.Input into the input FIFO of a child of the agent
// serving o.Dir, as a person types at its terminal: no turn, no reply.
// It writes only into the FIFO the agent's status file names as that
// input (DIR/in in stream mode, DIR/sessions/NAME/in: the check Send and
// Ask make, openInput), and by Send's key rule (not into an input FIFO
// others may read, where that matters). Input of more than PipeBuf
// bytes is written under the FIFO's lock, as a long request is, so that
// two long types do not interleave. A write the child does not take
// (a full pipe) waits until ctx ends; typed reports how many bytes went,
// all of them when err is nil. With o.EOF it then sends the eof line and
// waits for its answer. The errors: ErrNoChild, ErrNoSession,
// ErrNotSessions, ErrNoAgent, as reach and openInput say (nothing
// written), a *RejectedError for an eof the agent refused, ctx's error.
func Type(ctx context.Context, o TypeOptions) (typed int, err error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	dir, err := enterDir(o.Dir, ErrNoAgent, "")
	if err != nil {
		return 0, err
	}
	defer dir.Close()
	t, err := reach(dir, o.Session, "type")
	if err == nil && o.EOF {
		err = t.noControl
	}
	if err != nil {
		return 0, err
	}
	if typed, err = typeInto(ctx, t, o.Input); err != nil || !o.EOF {
		return typed, err
	}
	c := protocol.Control{Op: protocol.OpEOF, Session: o.Session}
	limit := o.Limit
	if d, ok := ctx.Deadline(); ok && (limit <= 0 || time.Until(d) < limit) {
		limit = max(time.Until(d), time.Millisecond)
	}
	if limit > 0 {
		c.Timeout = limit.String()
	}
	_, err = controlTrip(ctx, t.control, c, protocol.FrameEOF, o.Warn)
	return typed, err
}

// typeInto writes p into t's input FIFO, once it is the one the agent
// serves (openInput, with the key of a reply FIFO in DIR/replies: who
// the agent is).
func typeInto(ctx context.Context, t target, p []byte) (int, error) {
	in, err := t.input("type")
	if err != nil {
		return 0, err
	}
	defer t.release(in)
	replies, key, err := enterReplies(t.dir)
	if err != nil {
		return 0, err
	}
	replies.Close()
	if err := key.mayFollow(in); err != nil {
		return 0, err
	}
	w, err := openInput(ctx, in, key)
	if err != nil {
		return 0, err
	}
	defer w.Close() // closing w releases the lock
	return writeText(ctx, w, in.path(), p)
}

// writeText writes p to the input FIFO w (at path) until it is all
// written or ctx ends; more than PipeBuf bytes under the FIFO's lock
// (lock). Unlike a request line, text cut short is not finished: what
// was typed stays typed, and nothing else is.
func writeText(ctx context.Context, w *os.File, path string, p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	w.SetWriteDeadline(time.Time{})
	defer whenDone(ctx, func() { w.SetWriteDeadline(time.Unix(1, 0)) })()
	if len(p) > PipeBuf {
		if err := lock(ctx, w, path); err != nil {
			return 0, err
		}
		defer unlock(w)
	}
	n, err := w.Write(p)
	switch {
	case err == nil:
		return n, nil
	case ctx.Err() != nil:
		return n, ctx.Err()
	}
	return n, fmt.Errorf("type into %s: %w", path, err)
}
