//go:build linux

package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/fifobridge/fifobridge/internal/randname"
	"github.com/fifobridge/fifobridge/protocol"
)

// ErrNoAgent is returned by Send when no agent reads the input FIFO.
var ErrNoAgent = errors.New("no agent is reading")

// ErrAgentGone is returned by Send when the agent went away before the
// request's exit frame: it died, or a stop gave the request's frames up.
var ErrAgentGone = errors.New("the agent went away")

// ErrGivenUp is returned by Send and Ask when the agent gave the request
// (or the turn) up because its reader took nothing of it for the agent's
// -stop-timeout (a stopped process, a stdout nobody read): the agent
// removes the reply FIFO's name after it wrote to it, and closes its end.
var ErrGivenUp = errors.New("the agent gave this request up: its reader took nothing of the answer for the agent's -stop-timeout")

// ErrUnanswerable is returned by Send and Ask when the agent will not
// answer on the reply FIFO: it could not open it (it may not, or it ran
// out of descriptors), or it refused the request line as damaged (another
// writer put bytes into it, see protocol.ErrDamaged), where the reply the
// line names may be another's. It says so by removing the FIFO's name,
// and its log says why.
var ErrUnanswerable = errors.New("the agent cannot answer on the reply FIFO")

// RejectedError is an error frame the agent answered a request with.
// Code and TimedOut are an open's (see Open): the code PROGRAM could not
// start with (127, 126), or that the session's child showed no prompt
// within the open's timeout; 0 and false otherwise.
type RejectedError struct {
	Msg      string
	Code     int
	TimedOut bool
}

func (e *RejectedError) Error() string { return "request rejected: " + e.Msg }

// Result is the outcome of a request that ran.
type Result struct {
	Code     int
	Signal   string
	TimedOut bool
	// Exited says the child ended (an exit frame); for Ask, that the
	// conversation's child ended during the turn.
	Exited bool

	// How a conversation's turn ended (Ask), from its end frame.
	// Incomplete says the child asked for more input than the turn gave
	// (run -continuation) and was interrupted back to its prompt.
	Incomplete bool
	// Status is what the prompt's group "status" showed at the turn's
	// end (a shell's $?), if it showed a number; Prompt is every named
	// group of the prompt that took part.
	Status *int
	Prompt map[string]string
	// NotReady, set with TimedOut, says that the child had not been ready
	// since it started or since the turn before was interrupted, and
	// quotes its last line.
	NotReady string
	// Queued says the ask ended while it still waited for its turn (its
	// time limit, from the end frame, or its context): nothing of it was
	// written to the child, and no turn was interrupted for it.
	Queued bool
}

// Options is one request to send.
type Options struct {
	Dir   string // the agent's directory
	ID    string // request id; "" picks a random one
	Stdin []byte // the child's stdin
	// Args are appended to the agent's PROGRAM ARG... for this request, in
	// order; the agent refuses them unless it runs with -allow-args.
	Args  []string
	Limit time.Duration // the request's time limit; 0: the agent's default
	// Stdout and Stderr receive the child's output byte for byte. They
	// are written, and Warn called, one at a time on a goroutine of
	// Send's; a write still blocked when ctx ends is abandoned (see the
	// package doc).
	Stdout, Stderr io.Writer
	// Warn, when set, is told about what Send ignores: frames of other
	// requests, lines that are not frames. Each kind is told once.
	Warn func(msg string)
}

// Send sends o.Stdin as one exec-mode request to the agent serving o.Dir,
// with a private reply FIFO in DIR/replies, and copies the child's stdout
// and stderr to o.Stdout and o.Stderr byte for byte. Send never waits
// forever on an open: an absent agent is ErrNoAgent at once; an agent that
// dies is ErrAgentGone; an agent that stops gracefully still delivers the
// request's frames. The reply FIFO is removed before Send returns, whatever
// happens, including ctx being cancelled, which also cancels the request
// at the agent ({"cancel":"ID"}).
func Send(ctx context.Context, o Options) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	id := o.ID
	if len(id) > protocol.MaxIDLen {
		// The agent would answer under an id of its own, which send ignores.
		return Result{}, fmt.Errorf("request id is %d bytes, longer than %d", len(id), protocol.MaxIDLen)
	}
	if id == "" {
		id = randname.New()
	}
	dir, err := enterDir(o.Dir, ErrNoAgent, "")
	if err != nil {
		return Result{}, err
	}
	defer dir.Close()
	if err := refuseNonExec(dir); err != nil {
		return Result{}, err
	}
	t := trip{in: dirInput(dir, inName),
		relay: relay{id: id, stdout: o.Stdout, stderr: o.Stderr, warn: o.Warn, limit: limitFrom(o.Limit)},
		line: func(reply string) ([]byte, error) {
			return requestLine(id, reply, o.Stdin, o.Args, o.Limit)
		},
		gaveUp: func(*replyFIFO, *Result, bool) {
			// Interrupted, or past send's own -timeout: the request is
			// canceled, not left to notice that its reader went away
			// (a line cut short may have been finished all the same).
			cancelRequest(dir, inName, id)
		},
	}
	return t.run(ctx)
}

// limitFrom is when a request whose limit is d, starting now, is over
// (zero when d is 0: none).
func limitFrom(d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return time.Now().Add(d)
}
