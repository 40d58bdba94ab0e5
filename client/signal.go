//go:build linux

package client

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/fifobridge/fifobridge/child"
	"github.com/fifobridge/fifobridge/protocol"
)

// SignalOptions is one signal to send.
type SignalOptions struct {
	Dir string // the agent's directory
	// Session names the session whose child is signalled; "" is stream
	// mode's one child.
	Session string
	// Signal is a name such as INT, with or without SIG, or a number.
	Signal string
	// Warn, when set, is told about what Signal ignores on its reply
	// FIFO, as Send's is.
	Warn func(msg string)
}

// ErrBadSignal is returned by Signal for a signal it does not know;
// nothing is written then.
var ErrBadSignal = errors.New("unknown signal")

// Signal sends o.Signal to the foreground of a child of the agent
// serving o.Dir, as a person's Ctrl-C would: the foreground process group
// of its terminal, else its process group. It is one control line,
// "op":"signal", answered on a private reply FIFO as Sessions' lines
// are: on DIR/in naming the session, or on stream mode's control FIFO
// DIR/control, each written only into the FIFO the status file names
// under that name. It returns once the agent says the signal was sent.
// The errors: ErrBadSignal, ErrNoChild, ErrNotSessions, ErrNoAgent as
// reach says; a *RejectedError when the agent refused (a session not
// open, no child running now); ctx's error when it ended first.
func Signal(ctx context.Context, o SignalOptions) error {
	sig := strings.TrimSpace(o.Signal)
	if _, err := child.ParseSignal(sig); err != nil || sig == "" {
		return fmt.Errorf("%w %q: want a name such as INT or SIGINT, or a number from 1 to 64", ErrBadSignal, o.Signal)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dir, err := enterDir(o.Dir, ErrNoAgent, "")
	if err != nil {
		return err
	}
	defer dir.Close()
	t, err := reach(dir, o.Session, "signal")
	if err == nil {
		err = t.noControl
	}
	if err != nil {
		return err
	}
	c := protocol.Control{Op: protocol.OpSignal, Session: o.Session, Signal: sig}
	_, err = controlTrip(ctx, t.control, c, protocol.FrameSignaled, o.Warn)
	return err
}
