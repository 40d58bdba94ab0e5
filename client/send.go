package client

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/fifo"
	"github.com/fifobridge/fifobridge/protocol"
	"github.com/fifobridge/fifobridge/status"
)

// ErrNoAgent is returned by Send when no agent reads the input FIFO.
var ErrNoAgent = errors.New("no agent is reading")

// RejectedError is an error frame the agent answered a request with.
type RejectedError struct{ Msg string }

func (e *RejectedError) Error() string { return "request rejected: " + e.Msg }

// Result is the outcome of a request that ran.
type Result struct {
	Code     int
	Signal   string
	TimedOut bool
}

// Options is one request to send.
type Options struct {
	Dir   string        // the agent's directory
	ID    string        // request id; "" lets the agent assign one
	Stdin []byte        // the child's stdin
	Limit time.Duration // the request's time limit; 0: the agent's default
	// Stdout and Stderr receive the child's output byte for byte.
	Stdout, Stderr io.Writer
}

// Send sends o.Stdin as one exec-mode request to the agent serving o.Dir,
// with a private reply FIFO in DIR/replies, and copies the child's stdout
// and stderr to o.Stdout and o.Stderr byte for byte. Send never waits
// forever on an open: an absent agent is ErrNoAgent at once, and when the
// agent goes away while the request runs Send returns. The reply FIFO is
// removed before Send returns, whatever happens, including ctx being
// cancelled.
func Send(ctx context.Context, o Options) (Result, error) {
	dir, id, stdin, timeout, stdout, stderr := o.Dir, o.ID, o.Stdin, o.Limit, o.Stdout, o.Stderr
	in := filepath.Join(dir, "in")
	replies := filepath.Join(dir, "replies")
	if err := os.MkdirAll(replies, 0o755); err != nil {
		return Result{}, fmt.Errorf("make %s: %w", replies, err)
	}
	name, err := replyFIFOName()
	if err != nil {
		return Result{}, err
	}
	path := filepath.Join(replies, name)
	if _, err := fifo.Make(path, 0o600); err != nil {
		return Result{}, err
	}
	defer os.Remove(path)

	// Held read-write, the reply FIFO has a reader before the request is
	// sent, and never reads EOF between the agent's writes.
	reply, err := fifo.OpenSource(path)
	if err != nil {
		return Result{}, err
	}
	defer reply.Close()

	line, err := requestLine(id, name, stdin, timeout)
	if err != nil {
		return Result{}, err
	}
	start := agentStart(dir)
	if err := writeRequest(ctx, in, line); err != nil {
		return Result{}, err
	}

	// Reading stops on cancellation (Close wakes it) and when the agent
	// stops reading its input FIFO, which is how its death shows.
	watchCtx, stopWatch := context.WithCancel(ctx)
	gone := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if watchAgent(watchCtx, in, start) {
			close(gone)
		}
		reply.Close()
	}()
	defer func() { stopWatch(); <-watched }()

	dec := json.NewDecoder(reply)
	for {
		var f protocol.Frame
		if err := dec.Decode(&f); err != nil {
			select {
			case <-gone:
				return Result{}, fmt.Errorf("the agent went away: %w reading %s", ErrNoAgent, in)
			default:
			}
			if ctx.Err() != nil {
				return Result{}, ctx.Err()
			}
			return Result{}, fmt.Errorf("read reply %s: %w", path, err)
		}
		switch f.Type {
		case protocol.FrameStdout:
			if _, err := stdout.Write(f.Bytes()); err != nil {
				return Result{}, fmt.Errorf("write stdout: %w", err)
			}
		case protocol.FrameStderr:
			stderr.Write(f.Bytes())
		case protocol.FrameError:
			return Result{}, &RejectedError{Msg: f.Error}
		case protocol.FrameExit:
			s := Result{Signal: f.Signal, TimedOut: f.TimedOut}
			if f.Code != nil {
				s.Code = *f.Code
			}
			return s, nil
		}
	}
}

func replyFIFOName() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("make reply name: %w", err)
	}
	return fmt.Sprintf("send-%d-%s", os.Getpid(), hex.EncodeToString(b[:])), nil
}

func requestLine(id, reply string, stdin []byte, timeout time.Duration) ([]byte, error) {
	r := protocol.Request{ID: id, Reply: reply}
	if utf8.Valid(stdin) {
		r.Stdin = string(stdin)
	} else {
		r.StdinB64 = stdin
	}
	if timeout > 0 {
		r.Timeout = timeout.String()
	}
	// Without HTML escaping, '<', '>' and '&' take one byte, not six, so
	// what fits -max-request as stdin fits as a request.
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, fmt.Errorf("encode request: %w", err)
	}
	return b.Bytes(), nil // Encode ends it with a newline
}

// writeRequest writes line to the input FIFO at in as one piece: senders
// take an exclusive flock on the FIFO, so lines longer than PIPE_BUF from
// concurrent senders do not interleave.
func writeRequest(ctx context.Context, in string, line []byte) error {
	w, err := fifo.OpenWriterNow(in)
	switch {
	case errors.Is(err, fifo.ErrNoReader):
		return fmt.Errorf("%w %s", ErrNoAgent, in)
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%w %s (it does not exist)", ErrNoAgent, in)
	}
	if err != nil {
		return err
	}
	defer w.Close()
	stop := context.AfterFunc(ctx, func() { w.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	rc, err := w.SyscallConn()
	if err != nil {
		return fmt.Errorf("lock %s: %w", in, err)
	}
	for {
		var lerr error
		rc.Control(func(fd uintptr) { lerr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB) })
		if lerr == nil {
			break
		}
		if !errors.Is(lerr, unix.EWOULDBLOCK) {
			return fmt.Errorf("lock %s: %w", in, lerr)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
	n, err := w.Write(line)
	if err != nil && n > 0 {
		// Cancelled halfway: a cut line would swallow the next sender's
		// request, so the line is finished, or at least ended, first.
		n += finishLine(w, line[n:])
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("write request to %s: %w", in, err)
	}
	return nil // closing w releases the lock
}

// finishLine writes the rest of a request line cut short, giving it a
// moment; if the agent does not take it, it writes just the newline, so
// that only this request is refused as malformed.
func finishLine(w *os.File, rest []byte) int {
	w.SetWriteDeadline(time.Now().Add(finishPatience))
	n, err := w.Write(rest)
	if err == nil {
		return n
	}
	w.SetWriteDeadline(time.Now().Add(finishPatience))
	m, _ := w.Write([]byte{'\n'})
	return n + m
}

// finishPatience is how long a cancelled send waits for room to finish its
// line in the input FIFO.
const finishPatience = time.Second

// agentStart is when the agent serving dir started, from its status file,
// or "" when there is none.
func agentStart(dir string) string {
	s, err := status.Read(filepath.Join(dir, "status.json"))
	if err != nil {
		return ""
	}
	return fmt.Sprintf("%d@%s", s.PID, s.StartedAt.Format(time.RFC3339Nano))
}

// watchAgent returns true when no process reads the input FIFO any more, or
// a different agent than the one named by start (agentStart) serves it;
// false when ctx is done first.
func watchAgent(ctx context.Context, in, start string) bool {
	t := time.NewTicker(250 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
		w, err := fifo.OpenWriterNow(in)
		if err != nil {
			return true
		}
		w.Close()
		if start != "" && agentStart(filepath.Dir(in)) != start {
			return true // a new agent, which never saw the request
		}
	}
}
