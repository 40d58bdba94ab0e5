//go:build linux

package client

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fifobridge/fifobridge/protocol"
)

// PipeBuf is PIPE_BUF on Linux: a write of at most this many bytes to a
// pipe is atomic, so it needs no lock to stay in one piece.
const PipeBuf = protocol.PipeBuf

// LockPatience is how long a write larger than PipeBuf waits for the
// exclusive flock on the input FIFO before it fails.
const LockPatience = time.Second

// lockPoll is how often a write waiting for the lock tries again.
const lockPoll = 5 * time.Millisecond

// writeRequest writes line (protocol.WireLine's), which names reply, to
// the input FIFO in, once reply's key allows it on that
// FIFO and it is the FIFO the agent serves under that name (openInput),
// with one write(2) (writeLine). A line of at most PipeBuf bytes is
// atomic. A longer one is sealed and whole pieces of PipeBuf bytes, and is
// written under an exclusive flock on the FIFO, so that two long lines of
// senders who take it do not interleave; it waits at most LockPatience
// for that lock, so that nobody holding it can stall a send. Linux splits
// a write to a pipe only where the pipe is full, and then only between
// pages (of PipeBuf bytes, or a multiple) counted from the start of a
// write whose length is a multiple of PipeBuf: another writer, one without
// the lock or a short request, which takes none, can put bytes only
// between two pieces, and the agent then refuses the line (see
// protocol.WireLine). One write(2), not one per piece: the kernel splits
// nothing while the pipe has room, and short requests, which take no lock,
// would come between pieces written one by one.
func writeRequest(ctx context.Context, in input, line []byte, reply *replyFIFO) error {
	w, err := openInput(ctx, in, reply.key)
	if err != nil {
		return err
	}
	defer w.Close() // closing w releases the lock
	_, err = writeLine(ctx, w, in.path(), line)
	return err
}

// writeLine writes line to the input FIFO w (at path in) as one piece, by
// the rule of writeRequest, and says how many bytes went. A lock it took
// is released before it returns, so that w may be kept open (an Asker's
// DIR/ask); a write ctx ended leaves no deadline behind on w.
func writeLine(ctx context.Context, w *os.File, in string, line []byte) (int, error) {
	w.SetWriteDeadline(time.Time{})
	defer whenDone(ctx, func() { w.SetWriteDeadline(time.Unix(1, 0)) })()
	if len(line) > PipeBuf {
		if err := lock(ctx, w, in); err != nil {
			return 0, err
		}
		defer unlock(w)
	}
	n, err := w.Write(line)
	if err != nil && n > 0 {
		// Cancelled halfway: a cut line would swallow the next sender's
		// request, so the line is finished, or at least ended, first.
		finishLine(w, line[n:])
	}
	if err != nil {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		return n, fmt.Errorf("write request to %s: %w", in, err)
	}
	return n, nil
}

// unlock releases the flock lock took on w.
func unlock(w *os.File) {
	if rc, err := w.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.Flock(int(fd), unix.LOCK_UN) })
	}
}

// lock takes the exclusive flock on the input FIFO w, waiting at most
// LockPatience or until ctx is done.
func lock(ctx context.Context, w *os.File, in string) error {
	rc, err := w.SyscallConn()
	if err != nil {
		return fmt.Errorf("lock %s: %w", in, err)
	}
	deadline := time.NewTimer(LockPatience)
	defer deadline.Stop()
	tick := time.NewTicker(lockPoll)
	defer tick.Stop()
	for {
		var lerr error
		if err := rc.Control(func(fd uintptr) { lerr = unix.Flock(int(fd), unix.LOCK_EX|unix.LOCK_NB) }); err != nil {
			return fmt.Errorf("lock %s: %w", in, err)
		}
		if lerr == nil {
			return nil
		}
		if !errors.Is(lerr, unix.EWOULDBLOCK) {
			return fmt.Errorf("lock %s: %w", in, lerr)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-deadline.C:
			return fmt.Errorf("lock %s: %w for over %s (a request over %d bytes needs it)", in, ErrLocked, LockPatience, PipeBuf)
		case <-tick.C:
		}
	}
}

// finishLine writes the rest of a request line cut short, giving it a
// moment; if the agent does not take it, it writes just the newline, so
// that only this request is refused. The rest of a sealed line is whole
// pieces: the kernel splits it as writeRequest's write.
func finishLine(w *os.File, rest []byte) {
	w.SetWriteDeadline(time.Now().Add(finishPatience))
	if _, err := w.Write(rest); err == nil {
		return
	}
	w.SetWriteDeadline(time.Now().Add(finishPatience))
	w.Write([]byte{'\n'})
}

// finishPatience is how long a cancelled send waits for room to finish its
// line in the input FIFO.
const finishPatience = time.Second
