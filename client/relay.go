//go:build linux

package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fifobridge/fifobridge/protocol"
)

// maxFrame bounds one line read from the reply FIFO; a longer one is not a
// frame of this request and is skipped.
const maxFrame = 16 << 20

// maxWarnings bounds how many ignored frames are reported, so that a flood
// of forged frames cannot grow send's memory or its stderr without end.
const maxWarnings = 16

// relay reads the frames of request id from a reply FIFO and copies them
// to stdout and stderr until the exit frame. Its writes, warnings included,
// go through out, one at a time and in frame order, so that ctx ends the
// relay even while one of them blocks.
type relay struct {
	id             string
	stdout, stderr io.Writer
	warn           func(string)
	warned         map[string]bool
	out            *output
	// limit is the request's own time limit (zero: none): a write to
	// stdout or stderr still blocked then is given up (see output).
	limit time.Time
	// after, when set, is closed once a write a turn before abandoned
	// has returned (see output): nothing is written before.
	after <-chan struct{}
	// answer is the frame that answered a control line of sessions mode
	// (see control), once it came.
	answer *protocol.Frame
	// lost, when set, is told of a watch's lost frames, in order with
	// the output.
	lost func(bytes int64)
}

// run relays frames until the exit or error frame of r.id. Before the
// first frame, watch checks every watchPeriod that an agent still serves
// the request; after it, EOF on the reply FIFO shows the agent closed it.
func (r *relay) run(ctx context.Context, reply *replyFIFO, watch *agentWatch) (Result, error) {
	// A context that ended as the turn before took its last frame woke
	// that turn's reads all the same: the Asker's kept FIFO starts clean.
	reply.r.SetReadDeadline(time.Time{})
	wake := func() { reply.r.SetReadDeadline(time.Unix(1, 0)) }
	defer whenDone(ctx, wake)()

	var goneErr atomic.Pointer[error]
	first := make(chan struct{})
	var watching sync.WaitGroup
	watching.Add(1)
	go func() {
		defer watching.Done()
		if err := waitGone(ctx, watch, reply, first); err != nil {
			goneErr.Store(&err)
			wake()
		}
	}()
	stopWatch := sync.OnceFunc(func() { close(first); watching.Wait() })
	defer stopWatch()
	r.out = startOutput(r.limit, r.after)
	defer r.out.stop()

	lines := reply.lines
	framed := false // a frame of this request came
	for {
		line, err := lines.Next()
		var tooLong *protocol.TooLongError
		switch {
		case errors.As(err, &tooLong):
			if err := r.ignore(ctx, "line", "a line longer than %d bytes", maxFrame); err != nil {
				return Result{}, err
			}
			continue
		case err != nil:
			if err := readEnded(ctx, err, reply, &goneErr, framed); err != nil {
				return Result{}, err
			}
			continue
		}
		f, ok, err := r.frame(ctx, line)
		if err != nil {
			return Result{}, err
		}
		if !ok {
			continue
		}
		// The agent holds its write end: from now on its EOF tells.
		framed = true
		stopWatch()
		reply.dropKeeper()
		if goneErr.Swap(nil) != nil {
			// The watch gave up just as the frame came: undo its wake.
			reply.r.SetReadDeadline(time.Time{})
			if ctx.Err() != nil {
				wake()
			}
		}
		if res, done, err := r.handle(ctx, f); done || err != nil {
			return res, err
		}
	}
}

// limitFrom is when a request whose limit is d, starting now, is over
// (zero when d is 0: none).
func limitFrom(d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return time.Now().Add(d)
}

// readEnded says why reading reply ended with err: the watch's verdict
// (gone), ctx's end, the FIFO's name removed by the agent, or the agent's
// write end closed; framed says a frame of the request came. It returns
// nil when the read goes on: an Asker's FIFO after its first turn, whose
// keeper went at that turn's first frame, where the agent closed the
// write end it kept from a turn before, has its keeper back, and this
// request's frames are still to come.
func readEnded(ctx context.Context, err error, reply *replyFIFO, gone *atomic.Pointer[error], framed bool) error {
	if p := gone.Load(); p != nil {
		return *p
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if lost := reply.lost(); lost != nil {
		return lost
	}
	if errors.Is(err, io.EOF) && !framed && reply.keeper == nil {
		return reply.restoreKeeper()
	}
	if errors.Is(err, io.EOF) {
		return fmt.Errorf("%w: it closed reply FIFO %s before the request's exit frame", ErrAgentGone, reply.path)
	}
	return fmt.Errorf("read reply FIFO %s: %w", reply.path, err)
}

// waitGone returns the watch's verdict once no agent serves the request,
// or ErrUnanswerable once the agent removed the reply FIFO's name (it could
// not open it, or the line came damaged), or nil when first is closed or
// ctx is done.
func waitGone(ctx context.Context, watch *agentWatch, reply *replyFIFO, first <-chan struct{}) error {
	t := time.NewTicker(watchPeriod)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-first:
			return nil
		case <-t.C:
		}
		if err := reply.lost(); err != nil {
			return err
		}
		if err := watch.gone(); err != nil {
			return err
		}
	}
}

// frame decodes line as a frame of this request; anything else is
// reported and ignored. The error is ctx's, ended while a report waited.
func (r *relay) frame(ctx context.Context, line []byte) (protocol.Frame, bool, error) {
	if protocol.IsBlank(line) {
		return protocol.Frame{}, false, nil
	}
	var f protocol.Frame
	if err := json.Unmarshal(line, &f); err != nil {
		return f, false, r.ignore(ctx, "line", "a line that is not a frame")
	}
	if f.ID != r.id {
		return f, false, r.ignore(ctx, "id "+f.ID, "a frame of another request (id %q)", truncate(f.ID, 64))
	}
	return f, true, nil
}

// handle applies one frame of this request; done says it was the last. It
// returns ctx's error when ctx ends while the frame's data is written.
func (r *relay) handle(ctx context.Context, f protocol.Frame) (res Result, done bool, err error) {
	switch f.Type {
	case protocol.FrameStdout, protocol.FrameAnswer, protocol.FrameOutput:
		b := f.Bytes()
		var werr error
		if err := r.out.do(ctx, func() { _, werr = r.stdout.Write(b) }); err != nil {
			return Result{}, true, err
		}
		if werr != nil {
			return Result{}, true, fmt.Errorf("write stdout: %w", werr)
		}
	case protocol.FrameStderr:
		b := f.Bytes()
		if err := r.out.do(ctx, func() { r.stderr.Write(b) }); err != nil {
			return Result{}, true, err
		}
	case protocol.FrameError:
		e := &RejectedError{Msg: f.Error, TimedOut: f.TimedOut}
		if f.Code != nil {
			e.Code = *f.Code
		}
		return Result{}, true, e
	case protocol.FrameOpened, protocol.FrameClosed, protocol.FrameSessions, protocol.FrameSignaled, protocol.FrameEOF:
		r.answer = &f
		return Result{}, true, nil
	case protocol.FrameLost: // a watch that did not keep up
		if r.lost != nil {
			if err := r.out.do(ctx, func() { r.lost(f.Lost) }); err != nil {
				return Result{}, true, err
			}
		}
	case protocol.FrameEnd: // a conversation's turn (Ask), its child still there
		return Result{TimedOut: f.TimedOut, Incomplete: f.Incomplete, Status: f.Status, Prompt: f.Prompt,
			NotReady: f.NotReady, Queued: f.Queued}, true, nil
	case protocol.FrameExit:
		res = Result{Signal: f.Signal, TimedOut: f.TimedOut, Exited: true}
		if f.Code != nil {
			res.Code = *f.Code
		}
		return res, true, nil
	}
	return Result{}, false, nil
}

// ignore reports an ignored line once per key, and at most maxWarnings
// times in all, in order with the output (see output). It returns ctx's
// error when ctx ends while the report waits.
func (r *relay) ignore(ctx context.Context, key, format string, args ...any) error {
	if r.warn == nil || r.warned[key] || len(r.warned) >= maxWarnings {
		return nil
	}
	if r.warned == nil {
		r.warned = map[string]bool{}
	}
	r.warned[key] = true
	msg := fmt.Sprintf("ignored on the reply FIFO: "+format, args...)
	return r.out.do(ctx, func() { r.warn(msg) })
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
