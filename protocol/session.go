package protocol

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fifobridge/fifobridge/internal/jsonstr"
)

// Frame types that answer the control lines of sessions mode, besides
// error, which means there what it means in exec mode.
const (
	FrameOpened   = "opened"
	FrameClosed   = "closed"
	FrameSessions = "sessions"
	FrameSignaled = "signaled"
	// FrameWatching accepts a watch; FrameOutput frames then carry the
	// child's output ("data" or "data_b64"), FrameLost says how many bytes
	// a watcher that did not keep up lost ("bytes"), and the watch ends
	// with an exit frame (the child ended) or a closed frame (the session
	// closed, code 0).
	FrameWatching = "watching"
	FrameOutput   = "output"
	FrameLost     = "lost"
	// FrameEOF says that the child's input was ended (op eof).
	FrameEOF = "eof"
)

// Operations of a control line on DIR/in in sessions mode.
const (
	OpOpen   = "open"
	OpClose  = "close"
	OpList   = "list"
	OpSignal = "signal"
	// OpWatch follows the child's output from now on, on the line's own
	// reply FIFO (Raw: as written, not cleaned of terminal escapes).
	OpWatch = "watch"
	// OpEOF ends the child's input once what was written to its input
	// FIFO before the line was read has reached the child: on pipes the
	// child reads end-of-file, on a terminal the EOF character is typed.
	OpEOF = "eof"
)

// StreamControl is the name, in DIR, of stream mode's control FIFO: it
// takes the control lines that act on the one child (signal, watch, eof)
// with no session named. The status file names it ("control").
const StreamControl = "control"

// MaxSessionName is the longest session name, in bytes.
const MaxSessionName = 64

// Control is one control line of sessions mode, as one JSON object on one
// line of DIR/in. Reply is required: a control line is answered on its
// own reply FIFO only. The fields after Session are open's: those left
// out keep the run's settings.
type Control struct {
	ID      string `json:"id,omitempty"`
	Reply   string `json:"reply,omitempty"`
	Op      string `json:"op"`
	Session string `json:"session,omitempty"`
	// Signal is the signal of "op":"signal", a name such as INT or
	// SIGINT, or a number.
	Signal string `json:"signal,omitempty"`
	// All makes a close close every open session (Session is then empty).
	All bool `json:"all,omitempty"`
	// Raw makes a watch of a terminal get the output as written.
	Raw bool `json:"raw,omitempty"`

	// Reuse makes an open of a session that is open already a success
	// that starts nothing.
	Reuse        bool     `json:"reuse,omitempty"`
	Tty          *bool    `json:"tty,omitempty"`
	Size         string   `json:"size,omitempty"` // COLSxROWS, with a terminal
	Prompt       *string  `json:"prompt,omitempty"`
	Continuation *string  `json:"continuation,omitempty"`
	Args         []string `json:"args,omitempty"`
	Env          []string `json:"env,omitempty"` // K=V each
	Cwd          string   `json:"cwd,omitempty"`
	// User runs the session as this user (a name or UID), one of the
	// run's -allow-users.
	User string `json:"user,omitempty"`
	// Command is the session's own PROGRAM and its arguments (open NAME
	// -- PROGRAM [ARG...]), which needs -allow-args; empty: the run's.
	Command []string `json:"command,omitempty"`
	// Timeout is how long an open waits for its child's first prompt
	// (with a prompt), or an eof for the child's input to be read and
	// ended (it is then not ended), a Go duration; close's own wait is
	// the client's.
	Timeout string `json:"timeout,omitempty"`
}

// ParsedControl is a control line understood: its timeout as a duration
// (0: none given).
type ParsedControl struct {
	Control
	Limit time.Duration
}

// ValidSessionName reports whether name may name a session: 1 to 64 of
// [A-Za-z0-9._-], not beginning with ".", so that it is one plain entry
// of DIR/sessions and never "." or "..".
func ValidSessionName(name string) bool {
	if len(name) > MaxSessionName || strings.HasPrefix(name, ".") {
		return false
	}
	return ValidReplyName(name)
}

// ParseControl reads one control line of sessions mode (without its
// newline). On error the returned line still carries the id and reply the
// line named, as far as they could be read and are valid, so that the
// error reaches its sender. A line that may hold another writer's bytes is
// refused with an error that wraps ErrDamaged, as ParseRequest refuses it.
func ParseControl(line []byte) (ParsedControl, error) {
	var c ParsedControl
	if len(line) == 0 || line[0] != '{' {
		return c, errors.New(`invalid control line: in sessions mode DIR/in takes JSON lines such as {"id":"o1","reply":"R","op":"open","session":"sh1"}; send is for exec mode`)
	}
	ctl, err := decodeLine[Control](line, "control line")
	if err != nil {
		c.ID, c.Reply = SalvageHead(line)
		return c, err
	}
	c.Control = ctl
	r := Request{ID: c.ID, Reply: c.Reply}
	if err := checkHead(&r); err != nil {
		c.ID, c.Reply = r.ID, r.Reply
		return c, err
	}
	if c.Reply == "" {
		return c, errors.New(`invalid control line: "reply" is required (a FIFO in DIR/replies)`)
	}
	return c, checkControl(&c)
}

// checkControl refuses an unknown op, a bad session name and a bad
// timeout.
func checkControl(c *ParsedControl) error {
	switch c.Op {
	case OpOpen, OpClose, OpSignal, OpWatch, OpEOF:
		// A close of all names no session; signal, watch and eof name
		// none on stream mode's control FIFO (the server tells which
		// it needs).
		none := (c.Op == OpClose && c.All) || (c.Op != OpOpen && c.Op != OpClose && c.Session == "")
		if c.Op == OpClose && c.All && c.Session != "" {
			return errors.New(`invalid close line: "all" names no "session"`)
		}
		if !none && !ValidSessionName(c.Session) {
			return fmt.Errorf("invalid session name %q: want 1 to %d of A-Z a-z 0-9 . _ - that do not begin with a dot",
				truncateName(c.Session), MaxSessionName)
		}
	case OpList:
	default:
		return fmt.Errorf(`invalid op %q: want "open", "close", "list", "signal", "watch" or "eof"`, truncateName(c.Op))
	}
	if c.Op == OpSignal && c.Signal == "" {
		return errors.New(`invalid signal line: "signal" is required, e.g. "INT"`)
	}
	if c.Prompt != nil {
		if err := checkPattern("prompt", *c.Prompt); err != nil {
			return err
		}
	}
	if c.Continuation != nil {
		if err := checkPattern("continuation", *c.Continuation); err != nil {
			return err
		}
	}
	if c.Timeout != "" {
		d, err := time.ParseDuration(c.Timeout)
		if err != nil || d <= 0 {
			return fmt.Errorf("invalid timeout %q: want a positive duration such as 30s", truncateName(c.Timeout))
		}
		c.Limit = d
	}
	return nil
}

func truncateName(s string) string {
	if len(s) > 2*MaxSessionName {
		return s[:MaxSessionName] + "..."
	}
	return s
}

// AppendOpened appends the frame that says a session's child started (or,
// reused, was open already).
func AppendOpened(b []byte, id string, pid int, reused bool) []byte {
	b = appendHead(b, id, FrameOpened)
	b = append(b, `,"pid":`...)
	b = strconv.AppendInt(b, int64(pid), 10)
	if reused {
		b = append(b, `,"reused":true`...)
	}
	return append(b, "}\n"...)
}

// AppendClosed appends the frame that says a session is closed, with its
// last child's status (the code, or 128+N for signal N).
func AppendClosed(b []byte, id string, code int) []byte {
	b = appendHead(b, id, FrameClosed)
	b = append(b, `,"code":`...)
	b = strconv.AppendInt(b, int64(code), 10)
	return append(b, "}\n"...)
}

// AppendSessions appends the answer to a list: sessions is the JSON array
// the status file's "sessions" holds.
func AppendSessions(b []byte, id string, sessions json.RawMessage) []byte {
	b = appendHead(b, id, FrameSessions)
	b = append(b, `,"sessions":`...)
	if len(sessions) == 0 {
		sessions = json.RawMessage("[]")
	}
	b = append(b, sessions...)
	return append(b, "}\n"...)
}

// AppendSignaled appends the frame that says a session's signal was sent.
func AppendSignaled(b []byte, id string) []byte {
	return append(appendHead(b, id, FrameSignaled), "}\n"...)
}

// AppendEOF appends the frame that says the child's input was ended
// (op eof).
func AppendEOF(b []byte, id string) []byte {
	return append(appendHead(b, id, FrameEOF), "}\n"...)
}

// AppendTimedOut appends the error frame of a control line whose wait
// passed the line's timeout (an eof whose input was not read in time):
// "timed_out":true, and the client exits 124.
func AppendTimedOut(b []byte, id, msg string) []byte { return AppendOpenError(b, id, msg, 0, true) }

// AppendOpenError appends the error frame of an open that failed: with
// code 127 or 126 when PROGRAM could not start (the client exits with
// it), or with timedOut when the session's child showed no prompt within
// the open's timeout (the session stays open; the client exits 124).
// Other failures are plain error frames (AppendError), 125.
func AppendOpenError(b []byte, id, msg string, code int, timedOut bool) []byte {
	b = appendHead(b, id, FrameError)
	b = append(b, `,"error":`...)
	b = jsonstr.Append(b, []byte(strings.ToValidUTF8(msg, "\uFFFD")))
	if code != 0 {
		b = append(b, `,"code":`...)
		b = strconv.AppendInt(b, int64(code), 10)
	}
	if timedOut {
		b = append(b, `,"timed_out":true`...)
	}
	return append(b, "}\n"...)
}
