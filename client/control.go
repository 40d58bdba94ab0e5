//go:build linux

package client

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/fifobridge/fifobridge/internal/randname"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/status"
)

// Sessions is the agent serving Dir in sessions mode, as the host side
// reaches it: each call of Open, Close and List writes one control line
// (protocol.Control) to DIR/in and reads its answer from a private reply
// FIFO, exactly as Send sends a request. DIR is entered once per line
// (sharedir.Enter); the line is written, by writeRequest's rule, only
// into the FIFO the agent's status file names as its "in", and only
// when that file says the agent is in sessions mode (else
// ErrNotSessions, nothing written); the reply FIFO is removed before the
// call returns, whatever happens; a call ends when its context does.
type Sessions struct {
	Dir string // the agent's directory
	// Warn, when set, is told about what a call ignores on its reply
	// FIFO, as Send's is.
	Warn func(msg string)
}

// OpenOptions are what an open sets for its session. Fields left zero
// (nil, "", empty) are left out of the line, so that the run's settings
// hold: a Tty of false is sent as false.
type OpenOptions struct {
	// Reuse makes an open of a session that is open already a success
	// (Opened.Reused) that starts nothing.
	Reuse bool
	Tty   *bool
	Size  string // COLSxROWS, with a terminal
	// Prompt and Continuation are regular expressions; an empty one
	// turns the run's off for this session.
	Prompt, Continuation *string
	Args, Env            []string // appended to PROGRAM's argv; K=V each
	Cwd                  string
	// User is the user the session runs as, a name or UID, one of the
	// agent's -allow-users; "": the run's.
	User string
	// Command is the session's own PROGRAM and its arguments (the agent
	// needs -allow-args); empty: the run's.
	Command []string
	// Limit is how long the agent waits for the child's first prompt
	// (with a prompt); 0: the agent's default, 30 s.
	Limit time.Duration
}

// Opened is the answer to an open: the session's child, and whether it
// was open already (OpenOptions.Reuse).
type Opened struct {
	PID    int
	Reused bool
}

// Open opens session name. The errors: a *RejectedError for an open the
// agent refused (bad name, open already, too many sessions, options the
// run does not allow: Code 0), for a PROGRAM that could not start (Code
// 127 or 126), and for a child that showed no prompt within the limit
// (TimedOut: the session stays open); ErrNotSessions, ErrNoAgent,
// ErrAgentGone as for Send; ctx's error when it ended first.
func (s Sessions) Open(ctx context.Context, name string, o OpenOptions) (Opened, error) {
	c := protocol.Control{Op: protocol.OpOpen, Session: name, Reuse: o.Reuse, Tty: o.Tty, Size: o.Size,
		Prompt: o.Prompt, Continuation: o.Continuation, Args: o.Args, Env: o.Env, Cwd: o.Cwd,
		User: o.User, Command: o.Command}
	if o.Limit > 0 {
		c.Timeout = o.Limit.String()
	}
	f, err := s.control(ctx, c, protocol.FrameOpened)
	return Opened{PID: f.Pid, Reused: f.Reused}, err
}

// Closed is how the close of one session ended: the status of its last
// child (the code, or 128+N for signal N) once its tree is gone and its
// directory removed, or why not (a *RejectedError when it was not open).
type Closed struct {
	Name string
	Code int
	Err  error
}

// Close closes the sessions names, each with a control line of its own,
// all at once, and returns how each close ended, in the order of names,
// once every one has.
func (s Sessions) Close(ctx context.Context, names ...string) []Closed {
	out := make([]Closed, len(names))
	done := make(chan struct{})
	for i, name := range names {
		go func() {
			defer func() { done <- struct{}{} }()
			f, err := s.control(ctx, protocol.Control{Op: protocol.OpClose, Session: name}, protocol.FrameClosed)
			out[i] = Closed{Name: name, Err: err}
			if err == nil && f.Code != nil {
				out[i].Code = *f.Code
			}
		}()
	}
	for range names {
		<-done
	}
	return out
}

// CloseAll closes every session open when the agent reads its line, all
// at once, with one control line ("op":"close","all":true), and returns
// once every one is gone: its tree stopped, its directory removed. None
// open is a success. The errors are Close's, for the agent as a whole.
func (s Sessions) CloseAll(ctx context.Context) error {
	_, err := s.control(ctx, protocol.Control{Op: protocol.OpClose, All: true}, protocol.FrameClosed)
	return err
}

// List returns the open sessions, as the status file's "sessions" array
// holds them: parsed, and as the agent wrote it.
func (s Sessions) List(ctx context.Context) ([]status.Session, json.RawMessage, error) {
	f, err := s.control(ctx, protocol.Control{Op: protocol.OpList}, protocol.FrameSessions)
	if err != nil {
		return nil, nil, err
	}
	raw := f.Sessions
	if len(raw) == 0 {
		raw = json.RawMessage("[]")
	}
	var list []status.Session
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, nil, fmt.Errorf("read the list of sessions: %w", err)
	}
	return list, raw, nil
}

// commandOf names the host command of a control line's op, for messages.
var commandOf = map[string]string{protocol.OpOpen: "open", protocol.OpClose: "close", protocol.OpList: "ls",
	protocol.OpSignal: "signal", protocol.OpEOF: "type -eof"}

// control writes the control line c, with an id and a reply FIFO of its
// own, to DIR/in and returns the frame that answers it, which must be of
// type want; an error frame is a *RejectedError.
func (s Sessions) control(ctx context.Context, c protocol.Control, want string) (protocol.Frame, error) {
	if err := ctx.Err(); err != nil {
		return protocol.Frame{}, err
	}
	if c.Op != protocol.OpList && !c.All {
		if err := checkSessionName(c.Session); err != nil {
			return protocol.Frame{}, err
		}
	}
	dir, err := enterDir(s.Dir, ErrNoAgent, "")
	if err != nil {
		return protocol.Frame{}, err
	}
	defer dir.Close()
	if err := requireSessions(dir, commandOf[c.Op]); err != nil {
		return protocol.Frame{}, err
	}
	return controlTrip(ctx, dirInput(dir, inName), c, want, s.Warn)
}

// controlTrip writes the control line c, with an id and a reply FIFO of
// its own, into the control FIFO in (sessions mode's DIR/in, stream
// mode's DIR/control), by writeRequest's rule, and returns the frame
// that answers it, which must be of type want; an error frame is a
// *RejectedError. warn is told what the trip ignores on its reply FIFO.
func controlTrip(ctx context.Context, in input, c protocol.Control, want string, warn func(string)) (protocol.Frame, error) {
	c.ID = randname.New()
	t := trip{in: in, relay: relay{id: c.ID, stdout: io.Discard, stderr: io.Discard, warn: warn},
		line: func(reply string) ([]byte, error) {
			c.Reply = reply
			return encodeLine(c)
		},
	}
	if _, err := t.run(ctx); err != nil {
		return protocol.Frame{}, err
	}
	if a := t.relay.answer; a == nil || a.Type != want {
		return protocol.Frame{}, fmt.Errorf("%s: the agent did not answer with a %q frame", commandOf[c.Op], want)
	}
	return *t.relay.answer, nil
}
