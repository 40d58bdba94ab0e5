//go:build linux

package client

import "errors"

// The errors of the transport, which every front door returns.

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

// ErrLocked is returned by Send when a request larger than PipeBuf cannot
// take the input FIFO's lock within LockPatience.
var ErrLocked = errors.New("another writer holds the input FIFO's lock")
