//go:build linux

package client

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"time"

	"github.com/fifobridge/fifobridge/internal/randname"
	"github.com/fifobridge/fifobridge/sharedir"
)

// ErrClosed is returned by an Asker's Ask once Close was called, and by a
// turn that Close ended.
var ErrClosed = errors.New("asker closed")

// AskerOptions configure OpenAsker.
type AskerOptions struct {
	// Session, when set, names the session of a sessions-mode agent to
	// ask, through its DIR/sessions/NAME/ask, as AskOptions.Session does;
	// "" asks DIR/ask.
	Session string
	// Warn, when set, is told about what the Asker ignores on its reply
	// FIFO (frames of other ids, lines that are not frames), as Ask's is:
	// each kind once per turn.
	Warn func(msg string)
}

// Turn is one ask of an Asker.
type Turn struct {
	Input []byte // what to write to the child; the agent adds a missing "\n"
	// Limit is the turn's time limit (0: none); Quiet, if set, ends the
	// turn after that long without output.
	Limit, Quiet time.Duration
	// Stdout receives the answer as it comes (nil: it is dropped); a
	// write still blocked when the turn's context ends is abandoned, as
	// Ask's is, and the next turn writes nothing, to its own Stdout or
	// the same, before that write has returned.
	Stdout io.Writer
}

// Asker asks a conversation (run -prompt, or a session's) many turns, one
// at a time, as a client that keeps its FIFOs open: it enters DIR once
// (and a session's DIR/sessions/NAME, from DIR's descriptor, as Ask
// does), makes one private reply FIFO in DIR/replies (as Ask does: 128
// random bits in its name, mode 0600 or 0622 by replyKey's rule) and
// keeps it and DIR/ask (or the session's ask FIFO, checked as Ask checks
// it against the status file) open until Close. Below, DIR/ask stands for
// either. Each turn writes one line to DIR/ask and reads the frames
// of its own id from the reply FIFO up to the turn's end, exit or error
// frame; frames of other ids are reported (Warn) and skipped. A turn
// costs no open, mkfifo or unlink of its own: the reply FIFO's own write
// end (its keeper, which spares the reader an end of file before the
// agent opens the FIFO) is closed at the first turn's first frame, as
// Ask closes it, so that the agent's closing tells; the agent keeps its
// write end from turn to turn, and should it close it between turns, the
// next turn, reading the end of file before its first frame, opens the
// keeper again. Which agent serves DIR is taken to be the one that
// answered the turn before while that one still holds the reply FIFO;
// otherwise it is read from its status file, when that file changed.
//
// A turn that does not end with its last frame (its context ended, Close
// was called, the agent went away, Stdout failed) gives up the reply
// FIFO, as Ask does on its way out: the agent, seeing its reader gone,
// interrupts the turn. The next turn makes a new one. When the agent that
// read DIR/ask is gone and another one serves DIR, the next turn opens
// DIR/ask again; when a session's conversation is gone (the session was
// closed), the next turn enters DIR/sessions/NAME again, and is
// ErrNoSession unless a session of that name is open there by then.
//
// An Asker may be used from several goroutines: their turns are taken one
// at a time, in no set order, each waiting for the one before or for its
// own context.
type Asker struct {
	dir    *sharedir.Dir
	target input // the FIFO asked: DIR/ask, or a session's (its fifos the Asker's to close)
	warn   func(string)
	in     *os.File // target, open for writing; nil until a turn reopens it
	stale  bool     // target is a session's, whose ask FIFO nobody read: enter it again

	token chan struct{} // holds one element while a turn (or Close) runs
	life  context.Context
	end   context.CancelFunc // ends life: Close
	once  sync.Once
	reply *replyFIFO    // nil after a turn that gave it up
	agent agentIdentity // which agent serves DIR, for the turns' watches
	// writing is closed once a write to Stdout that a turn abandoned has
	// returned; nil when none is under way. The next turn writes nothing
	// before.
	writing <-chan struct{}
}

// OpenAsker opens an Asker of the conversation served in dir, or of
// session o.Session there. It fails, as Ask does, with ErrNoConversation
// when dir has no conversation (or the session no prompt), with
// ErrNotSessions and ErrNoSession for a session that cannot be asked, and
// with ErrNoAgent when nobody reads DIR/ask; it never waits (WaitAsking
// does). The Asker holds four descriptors until Close (five for a
// session: its directory, O_PATH): DIR and DIR/replies (O_PATH), the
// reply FIFO's read end and DIR/ask; one more, the reply FIFO's own
// write end, while no turn's frames flow.
func OpenAsker(dir string, o AskerOptions) (*Asker, error) {
	d, err := enterDir(dir, ErrNoConversation, noConversationHint)
	if err != nil {
		return nil, err
	}
	a := &Asker{dir: d, warn: o.Warn, token: make(chan struct{}, 1)}
	if a.target, err = askInput(d, o.Session); err != nil {
		d.Close()
		return nil, err
	}
	if a.reply, err = makeReply(d); err == nil {
		a.in, err = openInput(context.Background(), a.target, a.reply.key)
	}
	if err != nil {
		a.release()
		return nil, err
	}
	a.life, a.end = context.WithCancel(context.Background())
	return a, nil
}

// Ask asks one turn and copies its answer to t.Stdout as it comes. The
// Result and the errors are Ask's: TimedOut, the child's exit (Exited),
// a *RejectedError for an error frame, ErrAgentGone, ErrNoAgent, ctx's
// error when ctx ended first (the turn is then interrupted, unless the
// Result says Queued: the ask still waited, and nothing was sent), and
// ErrClosed once Close was called.
func (a *Asker) Ask(ctx context.Context, t Turn) (Result, error) {
	select {
	case a.token <- struct{}{}:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	case <-a.life.Done():
		return Result{}, ErrClosed
	}
	defer func() { <-a.token }()
	if a.life.Err() != nil {
		return Result{}, ErrClosed
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(a.life, cancel)
	defer stop()

	res, err := a.turn(ctx, t)
	if err != nil && ctx.Err() != nil && a.life.Err() != nil {
		err = ErrClosed
	}
	return res, err
}

// turn runs one turn, a trip over the Asker's own ends: the reply FIFO,
// made first when the turn before gave it up, and DIR/ask kept open
// (writeAsk). It gives the reply FIFO up unless the turn ended with its
// last frame.
func (a *Asker) turn(ctx context.Context, t Turn) (Result, error) {
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if a.reply == nil {
		r, err := makeReply(a.dir)
		if err != nil {
			return Result{}, err
		}
		a.reply = r
	}
	id := randname.New()
	stdout := t.Stdout
	if stdout == nil {
		stdout = io.Discard
	}
	watch := newAgentWatchOf(a.target, a.servingAgent())
	write := func(ctx context.Context, line []byte) error {
		err := a.writeAsk(ctx, line)
		watch.in = a.target // a session entered again is watched there
		return err
	}
	tr := trip{in: a.target, relay: relay{id: id, stdout: stdout, stderr: io.Discard, warn: a.warn, after: a.writing},
		line: func(reply string) ([]byte, error) {
			return askLine(id, reply, AskOptions{Input: t.Input, Limit: t.Limit, Quiet: t.Quiet})
		},
		reply: a.reply, write: write, watch: watch,
		gaveUp: func(reply *replyFIFO, res *Result, written bool) {
			if written && ctx.Err() != nil {
				res.Queued = reply.unserved() // the turn gives the FIFO up
			}
		},
	}
	res, err := tr.run(ctx)
	if out := tr.relay.out; out != nil {
		a.writing = out.pending() // the relay ran: its abandoned write, if any, holds up the next turn's
	}
	var rejected *RejectedError
	if err == nil || errors.As(err, &rejected) && a.reply.lost() == nil {
		return res, err // the reply FIFO serves the next turn as it is
	}
	a.reply.remove()
	a.reply = nil
	return res, err
}

// Close ends a turn under way (it returns ErrClosed), removes the reply
// FIFO and closes what the Asker holds. Later calls do nothing.
func (a *Asker) Close() error {
	a.once.Do(func() {
		a.end()
		a.token <- struct{}{} // the turn under way, ended, has returned; no other starts
		a.release()
	})
	return nil
}

// release closes what the Asker holds.
func (a *Asker) release() {
	if a.reply != nil {
		a.reply.remove()
		a.reply = nil
	}
	if a.in != nil {
		a.in.Close()
		a.in = nil
	}
	if a.target.fifos != nil && a.target.fifos != a.dir {
		a.target.fifos.Close()
	}
	a.dir.Close()
}
