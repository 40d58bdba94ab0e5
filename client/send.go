//go:build linux

package client

import (
	"context"
	"fmt"
	"io"
	"time"
	"unicode/utf8"

	"github.com/fifobridge/fifobridge/internal/randname"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/sharedir"
	"github.com/fifobridge/fifobridge/status"
)

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

// refuseNonExec fails when the agent that serves dir runs in stream
// mode, where a request line would be the child's input, or in sessions
// mode, where DIR/in takes control lines: nothing is written then. An
// agent writes its status file before it serves its FIFOs, so the file
// read here is the serving agent's own.
func refuseNonExec(dir *sharedir.Dir) error {
	s, err := status.ReadHeadAt(dir, statusName)
	if err != nil || s.Mode != "stream" && s.Mode != status.ModeSessions || s.State == "stopped" {
		return nil
	}
	if ok, err := status.AgentAliveAt(dir); err != nil || !ok {
		return nil
	}
	return fmt.Errorf("the agent serving %s runs in %s mode; send needs -mode exec", dir.Path(), s.Mode)
}

// requestLine encodes one request as it is written to the input FIFO (args,
// when there are any, in order), by protocol.WireLine: a newline first,
// so that a fragment an earlier writer left unterminated ends there (the
// agent skips the blank line that is left when there is none), then the
// JSON object, sealed when it does not fit one atomic write, and its
// newline.
func requestLine(id, reply string, stdin []byte, args []string, limit time.Duration) ([]byte, error) {
	r := protocol.Request{ID: id, Reply: reply, Args: args}
	if utf8.Valid(stdin) {
		r.Stdin = string(stdin)
	} else {
		r.StdinB64 = stdin
	}
	if limit > 0 {
		r.Timeout = limit.String()
	}
	return encodeLine(r)
}
