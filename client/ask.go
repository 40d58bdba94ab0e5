//go:build linux

package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/internal/randname"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

// ErrNoConversation is returned by Ask when the agent serving DIR holds no
// conversation: it runs in exec mode, or without -prompt (no DIR/ask).
var ErrNoConversation = errors.New("no conversation")

// AskOptions is one turn to ask.
type AskOptions struct {
	Dir string // the agent's directory
	// Session, when set, names the session of a sessions-mode agent to
	// ask, through its DIR/sessions/NAME/ask; "" asks DIR/ask.
	Session string
	Input   []byte // what to write to the child; the agent adds a missing "\n"
	// Limit is the turn's time limit (0: none); Quiet, if set, ends the
	// turn after that long without output.
	Limit, Quiet time.Duration
	// Stdout receives the answer as it comes, as Send's Stdout does: a
	// write still blocked when ctx ends is abandoned.
	Stdout io.Writer
	// Warn, when set, is told about what Ask ignores, as Send's is.
	Warn func(msg string)
}

// Ask asks the conversation served in o.Dir (run -prompt) one turn, as
// Send sends a request: with a private reply FIFO in DIR/replies, removed
// before Ask returns whatever happens, and one line written to DIR/ask
// under the same rule (atomic, or under the FIFO's lock when longer than
// PipeBuf). The answer is copied to o.Stdout as it comes. The Result says
// how the turn ended: at the child's prompt, with the prompt's Status and
// named groups (Prompt); Incomplete; TimedOut, with NotReady when the
// child was not ready (also when ctx ends first, from the status file)
// and Queued when the ask never had its turn (also when ctx ends first:
// see replyFIFO.unserved); or the child's exit (Exited) with its code.
// An agent without a conversation is ErrNoConversation, and nothing is
// written then. Cancelling ctx removes the reply FIFO, which the agent
// sees: it interrupts the turn, or drops the ask still waiting for it.
func Ask(ctx context.Context, o AskOptions) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	dir, err := enterDir(o.Dir, ErrNoConversation, noConversationHint)
	if err != nil {
		return Result{}, err
	}
	defer dir.Close()
	in, err := askInput(dir, o.Session)
	if err != nil {
		return Result{}, err
	}
	if in.fifos != dir {
		defer in.fifos.Close()
	}
	id := randname.New()
	t := trip{in: in, relay: relay{id: id, stdout: o.Stdout, stderr: io.Discard, warn: o.Warn, limit: limitFrom(o.Limit)},
		line: func(reply string) ([]byte, error) { return askLine(id, reply, o) },
		gaveUp: func(reply *replyFIFO, res *Result, written bool) {
			if !written {
				return
			}
			// Given up before the turn's last frame: while it still
			// waited, or in its turn, which the agent interrupts.
			res.Queued = reply.unserved()
			if res.NotReady == "" {
				res.NotReady = unreadyNote(in)
			}
		},
	}
	return t.run(ctx)
}

// noConversationHint follows the path of a DIR that does not exist, for
// Ask and OpenAsker.
const noConversationHint = " (is an agent run with -prompt serving it?)"

// askInput is the FIFO an ask goes to: DIR/ask, or with a session its
// DIR/sessions/NAME/ask (enterSession; the caller closes its fifos).
// Nothing is written when there is no conversation to ask.
func askInput(dir *sharedir.Dir, session string) (input, error) {
	if session != "" {
		return enterSession(dir, session)
	}
	if err := refuseNoConversation(dir); err != nil {
		return input{}, err
	}
	return dirInput(dir, askName), nil
}

// unreadyNote is what the status file of DIR says of a conversation's
// child (in's: DIR's own, or a session's) that has shown no prompt since
// it started or since a turn was interrupted, as of now, or "": an ask
// that is interrupted (its context ends before the turn's last frame)
// says why the child did not answer, as the end frame of one past its
// limit does. The file is rewritten at least every few seconds, so the
// child's last line may be that old.
func unreadyNote(in input) string {
	s, err := status.ReadAt(in.dir, statusName)
	if err != nil {
		return ""
	}
	turn := s.Child.Turn
	if in.session != "" {
		sess, _ := findSession(s, in.session)
		turn = sess.Turn
	}
	if turn == nil || turn.Unready == nil {
		return ""
	}
	return turn.Unready.Message(time.Now())
}

// askLine encodes one ask as it is written to DIR/ask, as requestLine
// encodes a request.
func askLine(id, reply string, o AskOptions) ([]byte, error) {
	a := protocol.Ask{ID: id, Reply: reply, Input: string(o.Input)}
	if o.Limit > 0 {
		a.Timeout = o.Limit.String()
	}
	if o.Quiet > 0 {
		a.Quiet = o.Quiet.String()
	}
	return encodeLine(a)
}

// refuseNoConversation fails when the agent serving dir holds no
// conversation on DIR/ask: one in exec mode, one in sessions mode (whose
// conversations are its sessions'), or one without -prompt, which makes
// no DIR/ask. Nothing is written then.
func refuseNoConversation(dir *sharedir.Dir) error {
	s, err := status.ReadHeadAt(dir, statusName)
	served := err == nil && s.State != "stopped" && (s.Mode == "exec" || s.Mode == status.ModeSessions)
	if ok, err := status.AgentAliveAt(dir); served && err == nil && ok {
		need := "a stream agent run with -prompt"
		if s.Mode == status.ModeSessions {
			need = "-session NAME"
		}
		return fmt.Errorf("%w: the agent serving %s runs in %s mode; ask needs %s", ErrNoConversation, dir.Path(), s.Mode, need)
	}
	err = fifo.CheckAt(dir, askName)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w: %s does not exist (is an agent run with -prompt serving %s?)", ErrNoConversation, dir.Join(askName), dir.Path())
	case err != nil:
		return fmt.Errorf("%w: %v", ErrNoConversation, err)
	}
	return nil
}
